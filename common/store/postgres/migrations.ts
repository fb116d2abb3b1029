/**
 * Versioned schema migrations of the PostgreSQL engine: the shared tables
 * (tenants, catalogue definitions, change log, webhooks, config variables,
 * delivery log). Each tenant's records live in a schema of its own
 * (`t<storage no>`), made by the engine as tenants and objects are added.
 * Append only: a shipped migration never changes; a new version is added.
 *
 * Text that is compared or ordered (ids, names, keys) is `COLLATE "C"`: code
 * point order, as SQLite's BINARY. Names compared without regard to ASCII
 * case are unique by `lower(…)`, which under "C" folds ASCII letters only (as
 * SQLite's NOCASE). JSON kept as text (definitions, headers, change-log
 * values) is `text`: PostgreSQL's json types would reorder or re-encode it.
 */

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "tenants, users, tokens; catalogue definitions",
    sql: `
      CREATE SEQUENCE tenant_storage_numbers;
      CREATE TABLE tenants (
        id text COLLATE "C" PRIMARY KEY,
        name text COLLATE "C" NOT NULL,
        created_at bigint NOT NULL,
        storage_no bigint NOT NULL UNIQUE DEFAULT nextval('tenant_storage_numbers')
      );
      CREATE UNIQUE INDEX tenants_name ON tenants (lower(name));
      CREATE TABLE users (
        tenant_id text COLLATE "C" NOT NULL REFERENCES tenants (id),
        id text COLLATE "C" NOT NULL,
        username text COLLATE "C" NOT NULL,
        email text NOT NULL,
        first_name text,
        last_name text NOT NULL,
        roles text[] NOT NULL,
        is_active boolean NOT NULL DEFAULT true,
        created_at bigint NOT NULL,
        PRIMARY KEY (tenant_id, id)
      );
      CREATE UNIQUE INDEX users_username ON users (tenant_id, lower(username));
      CREATE TABLE tokens (
        tenant_id text COLLATE "C" NOT NULL REFERENCES tenants (id),
        jti text COLLATE "C" NOT NULL,
        user_id text COLLATE "C" NOT NULL,
        roles text[] NOT NULL,
        description text,
        created_at bigint NOT NULL,
        expires_at bigint,
        revoked_at bigint,
        PRIMARY KEY (tenant_id, jti)
      );
      CREATE TABLE catalogue_versions (
        tenant_id text COLLATE "C" PRIMARY KEY REFERENCES tenants (id),
        version bigint NOT NULL
      );
      CREATE TABLE custom_objects (
        tenant_id text COLLATE "C" NOT NULL REFERENCES tenants (id),
        id text COLLATE "C" NOT NULL,
        name text COLLATE "C" NOT NULL,
        mapping text COLLATE "C" NOT NULL,
        definition text NOT NULL,
        tracked boolean NOT NULL,
        created_at bigint NOT NULL,
        PRIMARY KEY (tenant_id, id)
      );
      CREATE UNIQUE INDEX custom_objects_name ON custom_objects (tenant_id, lower(name));
      CREATE TABLE custom_fields (
        tenant_id text COLLATE "C" NOT NULL REFERENCES tenants (id),
        id text COLLATE "C" NOT NULL,
        object_name text COLLATE "C" NOT NULL,
        name text COLLATE "C" NOT NULL,
        definition text NOT NULL,
        created_at bigint NOT NULL,
        PRIMARY KEY (tenant_id, id)
      );
      CREATE UNIQUE INDEX custom_fields_name ON custom_fields (tenant_id, lower(object_name), lower(name));
    `,
  },
  {
    version: 2,
    name: "the failure a whole answer's statement raises",
    // VOLATILE, so the planner never evaluates it while folding constants: only a row that breaks
    // what the read tree promises reaches it (render-json.ts).
    sql: `
      CREATE FUNCTION tds_read_failed() RETURNS json LANGUAGE plpgsql VOLATILE AS $$
      BEGIN
        RAISE EXCEPTION 'a record breaks what the read tree promises';
      END $$;
    `,
  },
  {
    version: 3,
    name: "change log in commit order per partition, feed positions",
    // A unit of work takes its partition's feed_locks row FOR UPDATE, then one ticket from the
    // sequence for all its entries (idx: their order): the next writer of the partition gets its
    // ticket only once this one has committed, so within a partition a visible ticket implies every
    // lower one that commits is visible. The rows, one per partition, are made by the first API
    // process to open the store, with as many partitions as it is configured for
    // (api/store/postgres/settle-feed-partitions.ts); stores made before that was so got 16 here.
    // This migration's feed positions (a text cursor of every partition per reader) are one row per
    // reader and partition since version 6.
    sql: `
      CREATE SEQUENCE change_log_positions;
      CREATE TABLE change_log (
        position bigint NOT NULL,
        idx int NOT NULL,
        partition int NOT NULL,
        tenant_id text COLLATE "C" NOT NULL,
        object_name text NOT NULL,
        operation text NOT NULL,
        uid text NOT NULL,
        before text,
        after text,
        mutation_id text NOT NULL,
        sequence int NOT NULL,
        committed_at bigint NOT NULL,
        request_id text,
        PRIMARY KEY (position, idx)
      );
      CREATE TABLE feed_locks (partition int PRIMARY KEY);
      CREATE TABLE feed_positions (
        name text COLLATE "C" PRIMARY KEY,
        cursor text NOT NULL,
        updated_at bigint NOT NULL
      );
    `,
  },
  {
    version: 4,
    name: "config variables, webhooks and their set versions",
    // Webhook set versions are bumped by every statement that writes a webhook (no triggers: the
    // engine stays portable to PostgreSQL-wire services without them).
    sql: `
      CREATE TABLE config_variables (
        tenant_id text COLLATE "C" NOT NULL REFERENCES tenants (id),
        key text COLLATE "C" NOT NULL,
        config_type text NOT NULL,
        value text NOT NULL,
        description text,
        created_at bigint NOT NULL,
        updated_at bigint NOT NULL,
        PRIMARY KEY (tenant_id, key)
      );
      CREATE TABLE webhooks (
        tenant_id text COLLATE "C" NOT NULL REFERENCES tenants (id),
        id text COLLATE "C" NOT NULL,
        name text COLLATE "C" NOT NULL,
        url text NOT NULL,
        type text NOT NULL,
        query text NOT NULL,
        options text,
        headers text NOT NULL,
        secret text NOT NULL,
        previous_secret text,
        previous_secret_until bigint,
        enabled boolean NOT NULL,
        disabled_reason text,
        disabled_at bigint,
        enabled_by text,
        enabled_at bigint,
        version bigint NOT NULL,
        created_at bigint NOT NULL,
        updated_at bigint NOT NULL,
        PRIMARY KEY (tenant_id, id)
      );
      CREATE UNIQUE INDEX webhooks_name ON webhooks (tenant_id, lower(name));
      CREATE TABLE webhook_set_versions (
        tenant_id text COLLATE "C" PRIMARY KEY,
        version bigint NOT NULL
      );
    `,
  },
  {
    version: 5,
    name: "deliveries and their attempts",
    // An attempt is logged in flight before its request leaves and closed with its outcome after.
    sql: `
      CREATE TABLE deliveries (
        tenant_id text COLLATE "C" NOT NULL,
        id text COLLATE "C" NOT NULL,
        webhook_id text COLLATE "C" NOT NULL,
        event_id text COLLATE "C" NOT NULL,
        part int NOT NULL DEFAULT 0,
        status text NOT NULL,
        body text NOT NULL,
        test boolean NOT NULL DEFAULT false,
        attempts int NOT NULL,
        committed_at bigint NOT NULL,
        created_at bigint NOT NULL,
        updated_at bigint NOT NULL,
        PRIMARY KEY (tenant_id, id),
        UNIQUE (webhook_id, event_id, part)
      );
      CREATE INDEX deliveries_by_webhook ON deliveries (tenant_id, webhook_id, created_at);
      CREATE INDEX deliveries_by_age ON deliveries (created_at, id);
      CREATE TABLE delivery_attempts (
        tenant_id text COLLATE "C" NOT NULL,
        delivery_id text COLLATE "C" NOT NULL,
        attempt int NOT NULL,
        started_at bigint NOT NULL,
        duration_ms bigint NOT NULL,
        status_code int,
        response_body text,
        error text,
        in_flight boolean NOT NULL DEFAULT false,
        request text,
        PRIMARY KEY (tenant_id, delivery_id, attempt)
      );
    `,
  },
  {
    version: 6,
    name: "feed positions per partition; the change log read by partition",
    // Each partition has a reader of its own (on any API process), so a reader's position is one row
    // per partition, written without touching the others'. The text cursors of version 3
    // (`pg:<ticket>.<idx>,…`, one pair per partition in order) become those rows. Reads go by
    // partition, in commit order within it: the index serves them and the lag's count.
    sql: `
      CREATE INDEX change_log_by_partition ON change_log (partition, position, idx);
      ALTER TABLE feed_positions RENAME TO feed_cursors_v3;
      CREATE TABLE feed_positions (
        name text COLLATE "C" NOT NULL,
        partition int NOT NULL,
        ticket bigint NOT NULL,
        idx int NOT NULL,
        updated_at bigint NOT NULL,
        PRIMARY KEY (name, partition)
      );
      INSERT INTO feed_positions (name, partition, ticket, idx, updated_at)
        SELECT c.name, p.n - 1, split_part(p.pair, '.', 1)::bigint, split_part(p.pair, '.', 2)::int, c.updated_at
        FROM feed_cursors_v3 c,
          unnest(string_to_array(substr(c.cursor, 4), ',')) WITH ORDINALITY AS p(pair, n);
      DROP TABLE feed_cursors_v3;
    `,
  },
  {
    version: 7,
    name: "store-wide versions: token revocations",
    // One row per thing every process caches and must see change: `token_revocations` grows with each
    // revocation, so an API process that caches token lookups drops them when it moved (auth-service.ts).
    sql: `
      CREATE TABLE store_versions (
        name text COLLATE "C" PRIMARY KEY,
        version bigint NOT NULL
      );
    `,
  },
];
