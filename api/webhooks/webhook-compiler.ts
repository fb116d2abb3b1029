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
import type { DeferredOptions, Store, WebhookRecord } from "../store/store.ts";
import { parseSubscription } from "../subscriptions/parse-subscription.ts";
import { buildDeferredSchema, type DeferredWebhook, parseDeferredWebhook } from "./deferred-webhook.ts";

/** Tenants whose compiled webhooks are kept; past it, the least recently compiled go. */
const REMEMBERED_TENANTS = 1000;

/** One webhook compiled against one catalogue version; null when it no longer compiles (or has nothing to compile). */
interface Compiled {
  webhookVersion: number;
  catalogueVersion: number;
  webhook: CompiledWebhook | null;
  deferred: DeferredWebhook | null;
}

interface TenantWebhooks {
  setVersion: number;
  catalogueVersion: number;
  byId: Map<string, Compiled>;
  enabled: CompiledWebhook[];
  deferred: DeferredWebhook[];
}

/** The tenant's enabled webhooks by kind: change subscriptions and deferred webhooks, compiled. */
export interface TenantWebhookSource extends CompiledWebhookSource {
  deferredForTenant(tenantId: string): Promise<DeferredWebhook[]>;
}

export function createWebhookCompiler(
  store: Store,
  catalogues: CatalogueService,
  schemas: SchemaCache,
  log: Logger,
  minDeferredOffsetMs = 5000,
): TenantWebhookSource {
  const tenants = new Map<string, TenantWebhooks>();

  const compile = (webhook: WebhookRecord, catalogue: Catalogue): Pick<Compiled, "webhook" | "deferred"> => {
    try {
      const schema = schemas.get(catalogue).schema;
      if (webhook.type === "graphql")
        return {
          webhook: {
            webhookId: webhook.id,
            subscription: parseSubscription(webhook.query, schema, catalogue),
          },
          deferred: null,
        };
      if (webhook.type === "graphql_deferred") {
        const deferredSchema = buildDeferredSchema(schema, catalogue);
        const options = webhook.options as DeferredOptions;
        return {
          webhook: null,
          deferred: parseDeferredWebhook(
            webhook.id,
            webhook.query,
            options,
            deferredSchema,
            catalogue,
            minDeferredOffsetMs,
          ),
        };
      }
      // A scheduled webhook's ticks come from its job scheduler; it has nothing to compile.
      return { webhook: null, deferred: null };
    } catch (error) {
      log.warn("webhook subscription no longer compiles; skipped", {
        tenantId: webhook.tenantId,
        webhookId: webhook.id,
        ...describeError(error),
      });
      return { webhook: null, deferred: null };
    }
  };

  async function load(tenantId: string): Promise<TenantWebhooks> {
    const catalogue = await catalogues.get(tenantId);
    // Read before the list: a change committed in between shows as a newer version next time.
    const setVersion = await store.webhookSetVersion(tenantId);
    const known = tenants.get(tenantId);
    if (known?.setVersion === setVersion && known.catalogueVersion === catalogue.version) return known;
    const byId = new Map<string, Compiled>();
    const enabled: CompiledWebhook[] = [];
    const deferred: DeferredWebhook[] = [];
    for (const webhook of await store.listWebhooks(tenantId)) {
      if (!webhook.enabled) continue;
      let compiled = known?.byId.get(webhook.id);
      if (compiled?.webhookVersion !== webhook.version || compiled.catalogueVersion !== catalogue.version) {
        compiled = {
          webhookVersion: webhook.version,
          catalogueVersion: catalogue.version,
          ...compile(webhook, catalogue),
        };
      }
      byId.set(webhook.id, compiled);
      if (compiled.webhook) enabled.push(compiled.webhook);
      if (compiled.deferred) deferred.push(compiled.deferred);
    }
    const loaded = { setVersion, catalogueVersion: catalogue.version, byId, enabled, deferred };
    setNewest(tenants, tenantId, loaded, REMEMBERED_TENANTS);
    return loaded;
  }

  return {
    forTenant: async (tenantId) => (await load(tenantId)).enabled,
    deferredForTenant: async (tenantId) => (await load(tenantId)).deferred,
  };
}
