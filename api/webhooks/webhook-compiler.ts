/**
 * The tenant's webhooks as compiled subscriptions, compiled once per webhook
 * version and catalogue version (not per event). The enabled set is kept per
 * tenant by the store's webhook set version and the catalogue version, so a
 * batch of changes reads one number, not every webhook row. A webhook whose
 * subscription no longer compiles (a field it selects was deleted) is skipped
 * and logged.
 */
import { setNewest } from "../../common/bounded-map.ts";
import { describeError, type Logger } from "../../common/log.ts";
import type { CatalogueService } from "../catalogue/catalogue-service.ts";
import type { CompiledWebhook, CompiledWebhookSource } from "../feed/webhook-consumer.ts";
import type { SchemaCache } from "../graphql/schema/schema-cache.ts";
import type { Catalogue } from "../model/catalogue.ts";
import type { Store, WebhookRecord } from "../store/store.ts";
import { parseSubscription } from "../subscriptions/parse-subscription.ts";

/** Tenants whose compiled webhooks are kept; past it, the least recently compiled go. */
const REMEMBERED_TENANTS = 1000;

/** One webhook compiled against one catalogue version; null when it no longer compiles. */
interface Compiled {
  webhookVersion: number;
  catalogueVersion: number;
  webhook: CompiledWebhook | null;
}

interface TenantWebhooks {
  setVersion: number;
  catalogueVersion: number;
  byId: Map<string, Compiled>;
  enabled: CompiledWebhook[];
}

export function createWebhookCompiler(
  store: Store,
  catalogues: CatalogueService,
  schemas: SchemaCache,
  log: Logger,
): CompiledWebhookSource {
  const tenants = new Map<string, TenantWebhooks>();

  const compile = (webhook: WebhookRecord, catalogue: Catalogue): CompiledWebhook | null => {
    try {
      const subscription = parseSubscription(webhook.query, schemas.get(catalogue).schema, catalogue);
      return { webhookId: webhook.id, subscription };
    } catch (error) {
      log.warn("webhook subscription no longer compiles; skipped", {
        tenantId: webhook.tenantId,
        webhookId: webhook.id,
        ...describeError(error),
      });
      return null;
    }
  };

  return {
    async forTenant(tenantId: string): Promise<CompiledWebhook[]> {
      const catalogue = await catalogues.get(tenantId);
      // Read before the list: a change committed in between shows as a newer version next time.
      const setVersion = await store.webhookSetVersion(tenantId);
      const known = tenants.get(tenantId);
      if (known?.setVersion === setVersion && known.catalogueVersion === catalogue.version)
        return known.enabled;
      const byId = new Map<string, Compiled>();
      const enabled: CompiledWebhook[] = [];
      for (const webhook of await store.listWebhooks(tenantId)) {
        if (!webhook.enabled) continue;
        let compiled = known?.byId.get(webhook.id);
        if (compiled?.webhookVersion !== webhook.version || compiled.catalogueVersion !== catalogue.version) {
          compiled = {
            webhookVersion: webhook.version,
            catalogueVersion: catalogue.version,
            webhook: compile(webhook, catalogue),
          };
        }
        byId.set(webhook.id, compiled);
        if (compiled.webhook) enabled.push(compiled.webhook);
      }
      setNewest(
        tenants,
        tenantId,
        { setVersion, catalogueVersion: catalogue.version, byId, enabled },
        REMEMBERED_TENANTS,
      );
      return enabled;
    },
  };
}
