/**
 * Webhooks of a tenant: definitions checked in full before they are stored
 * (subscription against the tenant's schema, filters compiled, selection size,
 * URL scheme, headers, `{{ VAR }}` names defined), a signing secret shown once, the
 * delivery log, and manual redelivery.
 */
import { randomBytes } from "node:crypto";
import { printSchema } from "graphql";
import { checkCron } from "../../common/cron.ts";
import { ConflictError, type ErrorDetail, NotFoundError, ValidationError } from "../../common/errors.ts";
import { type SecretBox, webhookSecretContext } from "../../common/secret-box.ts";
import { templateVariables } from "../../common/template.ts";
import type { CatalogueService } from "../catalogue/catalogue-service.ts";
import type { WebhookSchedules } from "../feed/webhook-events.ts";
import type { SchemaCache } from "../graphql/schema/schema-cache.ts";
import type { DeliveryQuery, DeliveryRecord, Store, WebhookRecord } from "../store/store.ts";
import { parseSubscription } from "../subscriptions/parse-subscription.ts";
import { selectionProblems } from "../subscriptions/selection-limits.ts";
import { buildDeferredSchema, parseDeferredWebhook } from "./deferred-webhook.ts";
import type { WebhookDefinition, WebhookDraft } from "./webhook-input.ts";

export interface WebhookServiceDeps {
  store: Store;
  catalogues: CatalogueService;
  schemas: SchemaCache;
  box: SecretBox;
  /** Accept `http://` URLs (local development and tests only). */
  allowHttp: boolean;
  /** Most fields a subscription selects under data and previous (WEBHOOK_MAX_SELECTION_FIELDS). */
  maxSelectionFields: number;
  /** Puts deliveries (back) on the queue. */
  redeliver: (deliveries: DeliveryRecord[]) => Promise<void>;
  /** The queue's schedules of scheduled webhooks, kept in step with their definitions. */
  schedules: WebhookSchedules;
  /** Least offset from CreatedDate/LastModifiedDate of a deferred webhook (DEFERRED_WEBHOOKS_MIN_OFFSET_MS). */
  minDeferredOffsetMs?: number;
  /** Accept 6-field crons, seconds first (SCHEDULED_WEBHOOKS_ALLOW_SECONDS; tests only). */
  allowCronSeconds?: boolean;
  now?: () => number;
}

export type WebhookService = ReturnType<typeof createWebhookService>;

export function createWebhookService({
  store,
  catalogues,
  schemas,
  box,
  allowHttp,
  maxSelectionFields,
  redeliver,
  schedules,
  minDeferredOffsetMs = 5000,
  allowCronSeconds = false,
  now = Date.now,
}: WebhookServiceDeps) {
  /** Problems of a definition's URL: its scheme and form. */
  function urlProblems(url: string): ErrorDetail[] {
    const details: ErrorDetail[] = [];
    const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(url)?.[1]?.toLowerCase();
    if (scheme !== "https" && !(allowHttp && scheme === "http")) {
      details.push({
        path: "url",
        message: allowHttp ? "must start with https:// or http://" : "must start with https://",
      });
    }
    try {
      new URL(url.replace(/\{\{[^}]*\}\}/g, "x"));
    } catch {
      details.push({ path: "url", message: "is not a valid URL" });
    }
    return details;
  }

  /**
   * The definition, once every problem of it is known to be none: the body's shape, and of the
   * parts well-formed on their own, the URL, the variables and the subscription.
   * @throws ValidationError listing them all.
   */
  async function check(tenantId: string, draft: WebhookDraft): Promise<WebhookDefinition> {
    const { url, headers = {}, query, type } = draft.parts;
    const details = [...draft.problems, ...(url === undefined ? [] : urlProblems(url))];
    const defined = new Set((await store.listConfigVariables(tenantId)).map((variable) => variable.key));
    const texts: [string, string][] = [
      ...(url === undefined ? [] : [["url", url] as [string, string]]),
      ...Object.entries(headers).map(([name, value]): [string, string] => [`headers.${name}`, value]),
    ];
    for (const [path, text] of texts) {
      const missing = templateVariables(text).filter((name) => !defined.has(name));
      if (missing.length > 0)
        details.push({
          path,
          message: `undefined config variable${missing.length > 1 ? "s" : ""}: ${missing.join(", ")}`,
        });
    }
    if (type === "scheduled" && draft.parts.cron !== undefined) {
      for (const problem of checkCron(draft.parts.cron, { allowSeconds: allowCronSeconds }).problems)
        details.push({ path: "cron", message: `at position ${problem.position}: ${problem.message}` });
    }
    if (query !== undefined && type !== "scheduled") {
      const catalogue = await catalogues.get(tenantId);
      const schema = schemas.get(catalogue).schema;
      try {
        if (type === "graphql_deferred") {
          const { field, offset, filter } = draft.parts;
          if (field !== undefined && offset !== undefined) {
            const options = { field, offset, ...(filter === undefined ? {} : { filter }) };
            parseDeferredWebhook(
              "",
              query,
              options,
              buildDeferredSchema(schema, catalogue),
              catalogue,
              minDeferredOffsetMs,
            );
          }
        } else {
          const subscription = parseSubscription(query, schema, catalogue);
          details.push(...selectionProblems(subscription, maxSelectionFields));
        }
      } catch (error) {
        if (!(error instanceof ValidationError)) throw error;
        details.push(...(error.details ?? []));
      }
    }
    if (details.length > 0 || !draft.input)
      throw new ValidationError("the webhook definition is invalid", details);
    return draft.input;
  }

  async function load(tenantId: string, id: string): Promise<WebhookRecord> {
    const webhook = await store.findWebhook(tenantId, id);
    if (!webhook) throw new NotFoundError(`no webhook with id '${id}'`);
    return webhook;
  }

  /** The webhook, when it takes deliveries: a disabled one would fail every redelivery at once. */
  async function loadEnabled(tenantId: string, id: string): Promise<WebhookRecord> {
    const webhook = await load(tenantId, id);
    if (!webhook.enabled) {
      const why = webhook.disabledReason ? ` (${webhook.disabledReason})` : "";
      throw new ConflictError(
        `the webhook is disabled${why}; PUT its definition to enable it again, then redeliver`,
      );
    }
    return webhook;
  }

  return {
    /** Creates the webhook. @returns it with its signing secret in clear (shown this once). */
    async create(tenantId: string, draft: WebhookDraft): Promise<{ webhook: WebhookRecord; secret: string }> {
      const input = await check(tenantId, draft);
      const secret = `whsec_${randomBytes(24).toString("base64")}`;
      const id = crypto.randomUUID();
      const webhook: WebhookRecord = {
        tenantId,
        id,
        ...input,
        secret: box.seal(secret, webhookSecretContext(tenantId, id)),
        enabled: true,
        disabledReason: null,
        version: 1,
        createdAt: now(),
        updatedAt: now(),
      };
      await store.unitOfWork(async (tx) => {
        if (await tx.findWebhookByName(tenantId, input.name))
          throw new ConflictError(`a webhook named '${input.name}' exists already`);
        await tx.insertWebhook(webhook);
      });
      await schedules.sync(webhook);
      return { webhook, secret };
    },

    list: (tenantId: string) => store.listWebhooks(tenantId),

    /** The tenant's deferred schema as SDL (`GET /webhooks/deferred/schema`). */
    async deferredSchema(tenantId: string): Promise<string> {
      const catalogue = await catalogues.get(tenantId);
      return printSchema(buildDeferredSchema(schemas.get(catalogue).schema, catalogue));
    },
    get: load,

    /** Replaces the definition (the secret stays); re-enables a disabled webhook. */
    async replace(tenantId: string, id: string, draft: WebhookDraft): Promise<WebhookRecord> {
      await load(tenantId, id);
      const input = await check(tenantId, draft);
      const replaced = await store.unitOfWork(async (tx) => {
        const existing = await tx.findWebhook(tenantId, id);
        if (!existing) throw new NotFoundError(`no webhook with id '${id}'`);
        const other = await tx.findWebhookByName(tenantId, input.name);
        if (other && other.id !== id)
          throw new ConflictError(`a webhook named '${input.name}' exists already`);
        const replaced = {
          ...existing,
          ...input,
          enabled: true,
          disabledReason: null,
          version: existing.version + 1,
          updatedAt: now(),
        };
        await tx.replaceWebhook(replaced);
        return replaced;
      });
      // After the commit: a schedule for a definition that did not commit would tick for nothing.
      await schedules.sync(replaced);
      return replaced;
    },

    async delete(tenantId: string, id: string): Promise<void> {
      if (!(await store.unitOfWork((tx) => tx.deleteWebhook(tenantId, id))))
        throw new NotFoundError(`no webhook with id '${id}'`);
      await schedules.remove(id);
    },

    async deliveries(tenantId: string, webhookId: string, query: DeliveryQuery) {
      await load(tenantId, webhookId);
      const deliveries = await store.listDeliveries(tenantId, webhookId, query);
      const attempts = await store.listAttempts(
        tenantId,
        deliveries.map((d) => d.id),
      );
      return deliveries.map((delivery) => ({ delivery, attempts: attempts.get(delivery.id) ?? [] }));
    },

    /** Redelivers one delivery (whatever its status) of an enabled webhook. */
    async retry(tenantId: string, webhookId: string, deliveryId: string): Promise<DeliveryRecord> {
      await loadEnabled(tenantId, webhookId);
      const delivery = await store.findDelivery(tenantId, deliveryId);
      if (!delivery || delivery.webhookId !== webhookId)
        throw new NotFoundError(`no delivery with id '${deliveryId}'`);
      await store.unitOfWork((tx) => tx.resetDelivery(tenantId, deliveryId, now()));
      await redeliver([delivery]);
      return { ...delivery, status: "pending" };
    },

    /** Redelivers every failed delivery created since `since`, of an enabled webhook. @returns how many. */
    async recover(tenantId: string, webhookId: string, since: number): Promise<number> {
      await loadEnabled(tenantId, webhookId);
      const failed: DeliveryRecord[] = [];
      let before: DeliveryQuery["before"];
      for (;;) {
        const page = await store.listDeliveries(tenantId, webhookId, {
          status: "failed",
          since,
          before,
          limit: 500,
        });
        failed.push(...page);
        const last = page[page.length - 1];
        if (!last || page.length < 500) break;
        before = { createdAt: last.createdAt, id: last.id };
      }
      await store.unitOfWork(async (tx) => {
        for (const delivery of failed) await tx.resetDelivery(tenantId, delivery.id, now());
      });
      await redeliver(failed);
      return failed.length;
    },
  };
}
