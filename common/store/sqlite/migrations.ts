/**
 * Versioned schema migrations of the SQLite engine: the one list of every
 * table in the store file, the API's and the delivery log's alike, run by
 * whichever process opens the file first (common/store/open-engine.ts).
 * Append only: a shipped migration never changes; a new version is added instead.
 */
import type { Database } from "bun:sqlite";

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "tenants, users, tokens",
    sql: `
      CREATE TABLE tenants (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL UNIQUE COLLATE NOCASE,
        created_at INTEGER NOT NULL
      );
      CREATE TABLE users (
        tenant_id TEXT NOT NULL REFERENCES tenants(id),
        id TEXT NOT NULL,
        username TEXT NOT NULL COLLATE NOCASE,
        email TEXT NOT NULL,
        first_name TEXT,
        last_name TEXT NOT NULL,
        roles TEXT NOT NULL,
        is_active INTEGER NOT NULL DEFAULT 1,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (tenant_id, id),
        UNIQUE (tenant_id, username)
      );
      CREATE TABLE tokens (
        tenant_id TEXT NOT NULL REFERENCES tenants(id),
        jti TEXT NOT NULL,
        user_id TEXT NOT NULL,
        roles TEXT NOT NULL,
        description TEXT,
        created_at INTEGER NOT NULL,
        expires_at INTEGER,
        revoked_at INTEGER,
        PRIMARY KEY (tenant_id, jti)
      );
    `,
  },
  {
    version: 2,
    name: "tenant catalogues: custom objects and fields, per-tenant record tables",
    sql: `
      ALTER TABLE tenants ADD COLUMN storage_no INTEGER;
      UPDATE tenants SET storage_no = rowid;
      CREATE UNIQUE INDEX tenants_storage_no ON tenants (storage_no);
      CREATE TABLE catalogue_versions (
        tenant_id TEXT PRIMARY KEY REFERENCES tenants(id),
        version INTEGER NOT NULL
      );
      CREATE TABLE custom_objects (
        tenant_id TEXT NOT NULL REFERENCES tenants(id),
        id TEXT NOT NULL,
        name TEXT NOT NULL COLLATE NOCASE,
        definition TEXT NOT NULL,
        tracked INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (tenant_id, id),
        UNIQUE (tenant_id, name)
      );
      CREATE TABLE custom_fields (
        tenant_id TEXT NOT NULL REFERENCES tenants(id),
        id TEXT NOT NULL,
        object_name TEXT NOT NULL COLLATE NOCASE,
        name TEXT NOT NULL COLLATE NOCASE,
        definition TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (tenant_id, id),
        UNIQUE (tenant_id, object_name, name)
      );
    `,
  },
  {
    version: 3,
    name: "change log (transactional outbox) and per-tenant sequences",
    sql: `
      CREATE TABLE change_log (
        position INTEGER PRIMARY KEY AUTOINCREMENT,
        tenant_id TEXT NOT NULL,
        object_name TEXT NOT NULL,
        operation TEXT NOT NULL,
        uid TEXT NOT NULL,
        before TEXT,
        after TEXT,
        mutation_id TEXT NOT NULL,
        sequence INTEGER NOT NULL,
        committed_at INTEGER NOT NULL
      );
      CREATE TABLE sequences (
        tenant_id TEXT NOT NULL,
        name TEXT NOT NULL,
        value INTEGER NOT NULL,
        PRIMARY KEY (tenant_id, name)
      );
    `,
  },
  {
    version: 4,
    name: "config variables, webhooks, deliveries and their attempts, change-feed positions",
    sql: `
      CREATE TABLE config_variables (
        tenant_id TEXT NOT NULL REFERENCES tenants(id),
        key TEXT NOT NULL,
        config_type TEXT NOT NULL,
        value TEXT NOT NULL,
        description TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        PRIMARY KEY (tenant_id, key)
      );
      CREATE TABLE webhooks (
        tenant_id TEXT NOT NULL REFERENCES tenants(id),
        id TEXT NOT NULL,
        name TEXT NOT NULL COLLATE NOCASE,
        url TEXT NOT NULL,
        type TEXT NOT NULL,
        query TEXT NOT NULL,
        headers TEXT NOT NULL,
        secret TEXT NOT NULL,
        enabled INTEGER NOT NULL,
        disabled_reason TEXT,
        version INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        PRIMARY KEY (tenant_id, id),
        UNIQUE (tenant_id, name)
      );
      CREATE TABLE deliveries (
        tenant_id TEXT NOT NULL,
        id TEXT NOT NULL,
        webhook_id TEXT NOT NULL,
        mutation_id TEXT NOT NULL,
        status TEXT NOT NULL,
        body TEXT NOT NULL,
        attempts INTEGER NOT NULL,
        committed_at INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        PRIMARY KEY (tenant_id, id),
        UNIQUE (webhook_id, mutation_id)
      );
      CREATE INDEX deliveries_by_webhook ON deliveries (tenant_id, webhook_id, created_at);
      CREATE TABLE delivery_attempts (
        tenant_id TEXT NOT NULL,
        delivery_id TEXT NOT NULL,
        attempt INTEGER NOT NULL,
        started_at INTEGER NOT NULL,
        duration_ms INTEGER NOT NULL,
        status_code INTEGER,
        response_body TEXT,
        error TEXT,
        PRIMARY KEY (tenant_id, delivery_id, attempt)
      );
      CREATE TABLE feed_positions (
        name TEXT PRIMARY KEY,
        position INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
    `,
  },
  {
    version: 5,
    name: "webhook set versions",
    // Whoever writes a webhook (the API, another API process, the dispatcher disabling one on 410 Gone),
    // its tenant's set version moves: readers cache the set by it instead of listing it for every batch.
    sql: `
      CREATE TABLE webhook_set_versions (
        tenant_id TEXT PRIMARY KEY,
        version INTEGER NOT NULL
      );
      INSERT INTO webhook_set_versions (tenant_id, version) SELECT DISTINCT tenant_id, 1 FROM webhooks;
      CREATE TRIGGER webhook_inserted AFTER INSERT ON webhooks BEGIN
        INSERT INTO webhook_set_versions (tenant_id, version) VALUES (NEW.tenant_id, 1)
          ON CONFLICT (tenant_id) DO UPDATE SET version = version + 1;
      END;
      CREATE TRIGGER webhook_updated AFTER UPDATE ON webhooks BEGIN
        INSERT INTO webhook_set_versions (tenant_id, version) VALUES (NEW.tenant_id, 1)
          ON CONFLICT (tenant_id) DO UPDATE SET version = version + 1;
      END;
      CREATE TRIGGER webhook_deleted AFTER DELETE ON webhooks BEGIN
        INSERT INTO webhook_set_versions (tenant_id, version) VALUES (OLD.tenant_id, 1)
          ON CONFLICT (tenant_id) DO UPDATE SET version = version + 1;
      END;
    `,
  },
  {
    version: 6,
    name: "deliveries by age",
    // For the delivery log's retention, oldest first. On the creation time, which only the insert
    // writes: an index on the last change would be rewritten by every attempt the dispatcher logs.
    sql: "CREATE INDEX deliveries_by_age ON deliveries (created_at, id);",
  },
  {
    version: 7,
    name: "deliveries in parts",
    // One mutation's elements for one webhook may go in several deliveries (DELIVERY_MAX_BODY_BYTES):
    // the part joins the uniqueness of webhook × mutation. SQLite cannot change a table's UNIQUE
    // constraint in place, so the table is rebuilt (nothing references it); existing rows are part 0.
    sql: `
      CREATE TABLE deliveries_v7 (
        tenant_id TEXT NOT NULL,
        id TEXT NOT NULL,
        webhook_id TEXT NOT NULL,
        mutation_id TEXT NOT NULL,
        part INTEGER NOT NULL DEFAULT 0,
        status TEXT NOT NULL,
        body TEXT NOT NULL,
        attempts INTEGER NOT NULL,
        committed_at INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        PRIMARY KEY (tenant_id, id),
        UNIQUE (webhook_id, mutation_id, part)
      );
      INSERT INTO deliveries_v7
        (tenant_id, id, webhook_id, mutation_id, status, body, attempts, committed_at, created_at, updated_at)
        SELECT tenant_id, id, webhook_id, mutation_id, status, body, attempts, committed_at, created_at, updated_at
        FROM deliveries;
      DROP TABLE deliveries;
      ALTER TABLE deliveries_v7 RENAME TO deliveries;
      CREATE INDEX deliveries_by_webhook ON deliveries (tenant_id, webhook_id, created_at);
      CREATE INDEX deliveries_by_age ON deliveries (created_at, id);
    `,
  },
  {
    version: 8,
    name: "delivery attempts in flight",
    // The dispatcher logs an attempt before its request leaves (1) and fills in the outcome after (0):
    // a dispatcher killed in between leaves the attempt in the log, marked, for the next one to close
    // as of unknown outcome. Attempts logged before this migration all had their outcome.
    sql: "ALTER TABLE delivery_attempts ADD COLUMN in_flight INTEGER NOT NULL DEFAULT 0;",
  },
  {
    version: 9,
    name: "request ids in the change log",
    // The id of the HTTP request whose mutation made the change, carried into its delivery jobs so the
    // dispatcher's log lines for them carry it too. Entries logged before (and writes no request made) have none.
    sql: "ALTER TABLE change_log ADD COLUMN request_id TEXT;",
  },
  {
    version: 10,
    name: "webhook set versions kept by code",
    // Every webhook write moves its tenant's set version in its own transaction, in code
    // (webhook-rows.ts: the API's writes and the dispatcher's disable), as an engine without
    // triggers must; the triggers of migration 5 would now count each write twice. The versions
    // reached so far stay.
    sql: `
      DROP TRIGGER IF EXISTS webhook_inserted;
      DROP TRIGGER IF EXISTS webhook_updated;
      DROP TRIGGER IF EXISTS webhook_deleted;
    `,
  },
  {
    version: 11,
    name: "webhook operations: secret rotation, re-enabling, test deliveries, requests sent",
    // A rotated webhook keeps its previous secret (sealed like the current one) until the grace period
    // ends, and deliveries are signed with both meanwhile. disabled_at/enabled_by/enabled_at say when a
    // 410 Gone disabled it and who enabled it again; a webhook disabled before this migration is taken
    // as disabled at its last change. A test delivery (POST /webhooks/{id}/test) is marked as one. Each
    // attempt keeps the request it sent (URL and headers, secret variables redacted), as JSON: the
    // variables may change later, so rebuilding it when asked would show what was not sent.
    sql: `
      ALTER TABLE webhooks ADD COLUMN previous_secret TEXT;
      ALTER TABLE webhooks ADD COLUMN previous_secret_until INTEGER;
      ALTER TABLE webhooks ADD COLUMN disabled_at INTEGER;
      ALTER TABLE webhooks ADD COLUMN enabled_by TEXT;
      ALTER TABLE webhooks ADD COLUMN enabled_at INTEGER;
      UPDATE webhooks SET disabled_at = updated_at WHERE enabled = 0;
      ALTER TABLE deliveries ADD COLUMN test INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE delivery_attempts ADD COLUMN request TEXT;
    `,
  },
  {
    version: 12,
    name: "webhook kinds and delivery events",
    // A delivery reports an event of any kind (a mutation, a deferred record's firing at a due time, a
    // schedule tick): the mutation id column becomes the event id, its values stay (a mutation's event id
    // is its id) and so does the uniqueness of webhook × event × part. Webhooks of the deferred and
    // scheduled kinds keep what their kind adds (field, offset, filter; cron) as JSON in `options`.
    sql: `
      ALTER TABLE deliveries RENAME COLUMN mutation_id TO event_id;
      ALTER TABLE webhooks ADD COLUMN options TEXT;
    `,
  },
  {
    version: 13,
    name: "store-wide versions: token revocations",
    // One row per thing every process caches and must see change: `token_revocations` grows with each
    // revocation, so an API process that caches token lookups drops them when it moved (auth-service.ts).
    sql: `
      CREATE TABLE store_versions (
        name TEXT PRIMARY KEY,
        version INTEGER NOT NULL
      );
    `,
  },
];

/**
 * Applies every migration newer than the database's version, each in its own transaction. Safe
 * when two processes open a new file at once: each migration takes the write lock first and
 * looks at the version again under it, so the second process skips what the first applied.
 * Returns how many this call applied.
 */
export function migrate(db: Database, migrations: readonly Migration[] = MIGRATIONS): number {
  db.run(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`);
  const version = () =>
    db.query<{ v: number | null }, []>("SELECT max(version) AS v FROM schema_migrations").get()?.v ?? 0;
  let applied = 0;
  for (const migration of migrations) {
    if (migration.version <= version()) continue;
    const ran = db
      .transaction(() => {
        if (migration.version <= version()) return false;
        db.run(migration.sql);
        db.run("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)", [
          migration.version,
          migration.name,
          Date.now(),
        ]);
        return true;
      })
      .immediate();
    if (ran) applied++;
  }
  return applied;
}
