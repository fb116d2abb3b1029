/**
 * The tenant's webhooks as compiled subscriptions, compiled once per webhook
 * version and catalogue version (not per event). A webhook whose subscription
 * no longer compiles (a field it selects was deleted) is skipped and logged.
 */
import { describeError, type Logger } from "../../common/log.ts";
import type { CatalogueService } from "../catalogue/catalogue-service.ts";
import type { SchemaCache } from "../graphql/schema/schema-cache.ts";
import type { Store } from "../store/store.ts";
import { parseSubscription } from "../webhooks/parse-subscription.ts";
import type { CompiledWebhook } from "./match-changes.ts";

export function createWebhookCompiler(
  store: Store,
  catalogues: CatalogueService,
  schemas: SchemaCache,
  log: Logger,
) {
  const compiled = new Map<string, { stamp: string; webhook: CompiledWebhook | null }>();
  return {
    async forTenant(tenantId: string): Promise<CompiledWebhook[]> {
      const catalogue = await catalogues.get(tenantId);
      const result: CompiledWebhook[] = [];
      for (const webhook of await store.listWebhooks(tenantId)) {
        if (!webhook.enabled) continue;
        const stamp = `${webhook.version}/${catalogue.version}`;
        let entry = compiled.get(webhook.id);
        if (entry?.stamp !== stamp) {
          try {
            const subscription = parseSubscription(webhook.query, schemas.get(catalogue).schema, catalogue);
            entry = { stamp, webhook: { webhookId: webhook.id, subscription } };
          } catch (error) {
            log.warn("webhook subscription no longer compiles; skipped", {
              tenantId,
              webhookId: webhook.id,
              ...describeError(error),
            });
            entry = { stamp, webhook: null };
          }
          compiled.set(webhook.id, entry);
        }
        if (entry.webhook) result.push(entry.webhook);
      }
      return result;
    },
  };
}
