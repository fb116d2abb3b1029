/**
 * The store file a benchmark dispatcher reads: migrated by the API's
 * migrations, one tenant, webhooks with sealed secrets, and delivery log rows
 * for the jobs a run enqueues — written with plain SQL as the API writes them
 * (the same way test/support/delivery-log.ts does).
 */
import { Database } from "bun:sqlite";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { type DeliveryJob, deliveryIdOf } from "../../common/delivery-job.ts";
import { createSecretBox, webhookSecretContext } from "../../common/secret-box.ts";
import { migrate } from "../../common/store/sqlite/migrations.ts";

export interface BenchStore {
  tenantId: string;
  addWebhook(id: string, url: string): void;
  /** Pending delivery rows and their jobs: `count` mutations spread round-robin over `webhookIds`. */
  addDeliveries(run: string, webhookIds: readonly string[], count: number): DeliveryJob[];
  /** Empties the delivery log (between runs). */
  clearDeliveries(): void;
  close(): void;
}

/** Creates `dataDir/store.sqlite`; webhook secrets are sealed with `secretsKey`, as the dispatcher opens them. */
export function createBenchStore(dataDir: string, secretsKey: string): BenchStore {
  const db = new Database(join(dataDir, "store.sqlite"), { create: true, strict: true });
  db.run("PRAGMA journal_mode = WAL");
  db.run("PRAGMA busy_timeout = 5000");
  migrate(db);
  const box = createSecretBox(secretsKey);
  const tenantId = "bench";
  const now = Date.now();
  db.query("INSERT INTO tenants (id, name, created_at) VALUES (?, ?, ?)").run(tenantId, tenantId, now);
  const insertDelivery = db.query(
    `INSERT INTO deliveries (tenant_id, id, webhook_id, event_id, status, body, attempts, committed_at, created_at, updated_at)
     VALUES (?, ?, ?, ?, 'pending', ?, 0, ?, ?, ?)`,
  );
  const insertAll = db.transaction((jobs: DeliveryJob[]) => {
    for (const job of jobs) {
      insertDelivery.run(
        tenantId,
        job.deliveryId,
        job.webhookId,
        job.eventId,
        JSON.stringify(job.body),
        job.committedAt,
        now,
        now,
      );
    }
  });

  return {
    tenantId,
    addWebhook(id, url) {
      const secret = `whsec_${randomBytes(24).toString("base64")}`;
      db.query(
        `INSERT INTO webhooks (tenant_id, id, name, url, type, query, headers, secret, enabled, disabled_reason, version, created_at, updated_at)
         VALUES (?, ?, ?, ?, 'graphql', 'subscription { schemaJobs { operation } }', '{}', ?, 1, NULL, 1, ?, ?)`,
      ).run(tenantId, id, `hook ${id}`, url, box.seal(secret, webhookSecretContext(tenantId, id)), now, now);
    },
    addDeliveries(run, webhookIds, count) {
      const jobs = Array.from({ length: count }, (_, n): DeliveryJob => {
        const webhookId = webhookIds[n % webhookIds.length] as string;
        const eventId = `${run}-${Math.floor(n / webhookIds.length)}`;
        const committedAt = Date.now();
        return {
          tenantId,
          webhookId,
          eventId,
          deliveryId: deliveryIdOf(webhookId, eventId, committedAt),
          body: [{ data: { schemaJobs: { operation: "INSERT", id: n, name: `Job ${n}`, status: "open" } } }],
          committedAt,
        };
      });
      insertAll(jobs);
      return jobs;
    },
    clearDeliveries() {
      db.run("DELETE FROM delivery_attempts");
      db.run("DELETE FROM deliveries");
    },
    close: () => db.close(),
  };
}
