/**
 * Webhooks of a tenant: definitions checked in full before they are stored
 * (subscription against the tenant's schema, filters compiled, selection size,
 * URL scheme, headers, `{{ VAR }}` names defined), a signing secret shown once and
 * rotated with a grace period, the delivery log, manual redelivery, test deliveries and
 * re-enabling a webhook a 410 Gone disabled. A definition and its scheduler (scheduled
 * webhooks) change together or not at all, as the client sees it.
 */
import { randomBytes } from "node:crypto";
import { printSchema } from "graphql";
import { checkCron } from "../../common/cron.ts";
import { type DeliveryJob, deliveryIdOf, eventIdOf } from "../../common/delivery-job.ts";
import {
  ConflictError,
  type ErrorDetail,
  NotFoundError,
  UnavailableError,
  ValidationError,
} from "../../common/errors.ts";
import { describeError, type Logger } from "../../common/log.ts";
import { type SecretBox, webhookSecretContext } from "../../common/secret-box.ts";
import { templateVariables } from "../../common/template.ts";
import type { CatalogueService } from "../catalogue/catalogue-service.ts";
import type { WebhookSchedules } from "../feed/webhook-events.ts";
import type { SchemaCache } from "../graphql/schema/schema-cache.ts";
import type {
  DeferredOptions,
  DeliveryAttempt,
  DeliveryQuery,
  DeliveryRecord,
  Store,
  StoreWriter,
  WebhookRecord,
} from "../store/store.ts";
import { exampleElement } from "../subscriptions/example-event.ts";
import { parseSubscription } from "../subscriptions/parse-subscription.ts";
import { selectionProblems } from "../subscriptions/selection-limits.ts";
import { exampleDeferredElement } from "./deferred-example.ts";
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
  /** Where a scheduler that could not be saved, and the undoing of its change, are reported. */
  log: Logger;
  /** Least offset from CreatedDate/LastModifiedDate of a deferred webhook (DEFERRED_WEBHOOKS_MIN_OFFSET_MS). */
  minDeferredOffsetMs?: number;
  /** Accept 6-field crons, seconds first (SCHEDULED_WEBHOOKS_ALLOW_SECONDS; tests only). */
  allowCronSeconds?: boolean;
  now?: () => number;
}

export type WebhookService = ReturnType<typeof createWebhookService>;

/** How long the previous secret keeps signing after a rotation, unless the call says otherwise: one day. */
export const DEFAULT_ROTATION_GRACE_SECONDS = 86_400;
/** The longest grace period a rotation may ask for: 30 days (two secrets signing is meant to be brief). */
export const MAX_ROTATION_GRACE_SECONDS = 30 * 86_400;

/** A new signing secret: `whsec_` and the base64 of 24 random bytes (Standard Webhooks). */
const newSecret = () => `whsec_${randomBytes(24).toString("base64")}`;

export function createWebhookService({
  store,
  catalogues,
  schemas,
  box,
  allowHttp,
  maxSelectionFields,
  redeliver,
  schedules,
  log,
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
        `the webhook is disabled${why}; enable it again (POST /webhooks/${id}/enable), then redeliver`,
      );
    }
    return webhook;
  }

  /**
   * Brings the scheduler in step with `webhook`, just committed. The scheduler is saved after the
   * commit (a unit of work queues nothing: it may run again, and a scheduler for a definition that
   * did not commit would tick for nothing); when it cannot be saved (Redis away or refusing
   * writes), `undo` puts the definition back in the store, so the client is told of a change that
   * did not happen rather than of one half made.
   * @throws UnavailableError when the scheduler could not be saved.
   */
  async function syncOrUndo(
    webhook: WebhookRecord,
    undo: (tx: StoreWriter, current: WebhookRecord) => Promise<void>,
  ): Promise<void> {
    try {
      await schedules.sync(webhook);
      return;
    } catch (error) {
      const { tenantId, id } = webhook;
      log.error("webhook scheduler not saved; the change is undone", {
        tenantId,
        webhookId: id,
        ...describeError(error),
      });
      try {
        await store.unitOfWork(async (tx) => {
          const current = await tx.findWebhook(tenantId, id);
          // Only our own change: one made since (a later replace or delete) is left as it is.
          if (current?.version === webhook.version) await undo(tx, current);
        });
      } catch (undoError) {
        log.error("webhook change could not be undone", {
          tenantId,
          webhookId: id,
          ...describeError(undoError),
        });
        throw new UnavailableError(
          "the webhook's schedule could not be saved, and the change could not be undone; try again",
        );
      }
    }
    throw new UnavailableError("the webhook's schedule could not be saved; nothing was changed, try again");
  }

  return {
    /** Creates the webhook. @returns it with its signing secret in clear (shown this once). */
    async create(tenantId: string, draft: WebhookDraft): Promise<{ webhook: WebhookRecord; secret: string }> {
      const input = await check(tenantId, draft);
      const secret = newSecret();
      const id = crypto.randomUUID();
      const webhook: WebhookRecord = {
        tenantId,
        id,
        ...input,
        secret: box.seal(secret, webhookSecretContext(tenantId, id)),
        previousSecret: null,
        previousSecretUntil: null,
        enabled: true,
        disabledReason: null,
        disabledAt: null,
        enabledBy: null,
        enabledAt: null,
        version: 1,
        createdAt: now(),
        updatedAt: now(),
      };
      await store.unitOfWork(async (tx) => {
        if (await tx.findWebhookByName(tenantId, input.name))
          throw new ConflictError(`a webhook named '${input.name}' exists already`);
        await tx.insertWebhook(webhook);
      });
      // Only a scheduled webhook has a scheduler: the other kinds' writes need no Redis.
      if (webhook.type === "scheduled")
        await syncOrUndo(webhook, async (tx) => {
          await tx.deleteWebhook(tenantId, id);
        });
      return { webhook, secret };
    },

    list: (tenantId: string) => store.listWebhooks(tenantId),

    /** The tenant's deferred schema as SDL (`GET /webhooks/deferred/schema`). */
    async deferredSchema(tenantId: string): Promise<string> {
      const catalogue = await catalogues.get(tenantId);
      return printSchema(buildDeferredSchema(schemas.get(catalogue).schema, catalogue));
    },
    get: load,

    /**
     * Replaces the definition (the secret stays); re-enables a disabled webhook, as `userId`.
     */
    async replace(tenantId: string, id: string, draft: WebhookDraft, userId: string): Promise<WebhookRecord> {
      await load(tenantId, id);
      const input = await check(tenantId, draft);
      const { previous, replaced } = await store.unitOfWork(async (tx) => {
        const existing = await tx.findWebhook(tenantId, id);
        if (!existing) throw new NotFoundError(`no webhook with id '${id}'`);
        const other = await tx.findWebhookByName(tenantId, input.name);
        if (other && other.id !== id)
          throw new ConflictError(`a webhook named '${input.name}' exists already`);
        const replaced = {
          ...existing,
          ...input,
          ...(existing.enabled ? {} : { enabled: true, enabledBy: userId, enabledAt: now() }),
          version: existing.version + 1,
          updatedAt: now(),
        };
        await tx.replaceWebhook(replaced);
        return { previous: existing, replaced };
      });
      if (replaced.type === "scheduled" || previous.type === "scheduled")
        await syncOrUndo(replaced, async (tx, current) => {
          const { name, url, headers, type, query, options, enabled, enabledBy, enabledAt } = previous;
          // The definition as it was (the secrets as they are), under a new version: what was compiled
          // for this one goes stale.
          await tx.replaceWebhook({
            ...current,
            ...{ name, url, headers, type, query, options, enabled, enabledBy, enabledAt },
            version: current.version + 1,
            updatedAt: now(),
          });
        });
      return replaced;
    },

    /**
     * Enables a disabled webhook again, as `userId`; the time and reason it was disabled stay on
     * its record. An enabled one is left as it is.
     */
    async enable(tenantId: string, id: string, userId: string): Promise<WebhookRecord> {
      return store.unitOfWork(async (tx) => {
        const existing = await tx.findWebhook(tenantId, id);
        if (!existing) throw new NotFoundError(`no webhook with id '${id}'`);
        if (existing.enabled) return existing;
        const at = now();
        const enabled = {
          ...existing,
          enabled: true,
          enabledBy: userId,
          enabledAt: at,
          version: existing.version + 1,
          updatedAt: at,
        };
        await tx.replaceWebhook(enabled);
        return enabled;
      });
    },

    /**
     * Gives the webhook a new signing secret; the current one keeps signing beside it for
     * `graceSeconds` (0: not at all), replacing any previous one still in its grace period.
     * @returns the new secret in clear (shown this once).
     */
    async rotateSecret(tenantId: string, id: string, graceSeconds: number): Promise<string> {
      const secret = newSecret();
      const context = webhookSecretContext(tenantId, id);
      await store.unitOfWork(async (tx) => {
        const existing = await tx.findWebhook(tenantId, id);
        if (!existing) throw new NotFoundError(`no webhook with id '${id}'`);
        const at = now();
        await tx.rotateWebhookSecret(tenantId, id, {
          secret: box.seal(secret, context),
          previousSecret: existing.secret,
          previousSecretUntil: at + graceSeconds * 1000,
          at,
        });
      });
      return secret;
    },

    /**
     * Sends an example delivery, logged as a test delivery and delivered like any other: for a
     * graphql webhook one element shaped by its subscription with example values; for a
     * graphql_deferred one the element a firing sends, its query answered for an example record
     * (a list of one example child per relationship); for a scheduled one the `{}` a tick sends.
     * @throws ConflictError when the webhook is disabled; ValidationError when its subscription
     * or deferred query no longer compiles against the tenant's model.
     */
    async sendTest(tenantId: string, id: string): Promise<DeliveryRecord> {
      const webhook = await loadEnabled(tenantId, id);
      const at = now();
      let body: DeliveryJob["body"] = {};
      if (webhook.type === "graphql") {
        const catalogue = await catalogues.get(tenantId);
        const subscription = parseSubscription(webhook.query, schemas.get(catalogue).schema, catalogue);
        body = [exampleElement(subscription, at)];
      } else if (webhook.type === "graphql_deferred") {
        const catalogue = await catalogues.get(tenantId);
        const deferred = parseDeferredWebhook(
          id,
          webhook.query,
          webhook.options as DeferredOptions,
          buildDeferredSchema(schemas.get(catalogue).schema, catalogue),
          catalogue,
          minDeferredOffsetMs,
        );
        body = [exampleDeferredElement(deferred, catalogue, at)];
      }
      // An event of its own: a test is no change, and its id must not meet a real event's delivery.
      const eventId = eventIdOf({ kind: "test", id: crypto.randomUUID() });
      const delivery: DeliveryRecord = {
        tenantId,
        id: deliveryIdOf(id, eventId, at),
        webhookId: id,
        eventId,
        part: 0,
        status: "pending",
        body: JSON.stringify(body),
        test: true,
        attempts: 0,
        committedAt: at,
        createdAt: at,
        updatedAt: at,
      };
      await store.unitOfWork((tx) => tx.insertDeliveries([delivery]));
      await redeliver([delivery]);
      return delivery;
    },

    async delete(tenantId: string, id: string): Promise<void> {
      const deleted = await store.unitOfWork(async (tx) => {
        const found = await tx.findWebhook(tenantId, id);
        return found && (await tx.deleteWebhook(tenantId, id)) ? found : null;
      });
      if (!deleted) throw new NotFoundError(`no webhook with id '${id}'`);
      if (deleted.type === "scheduled") await schedules.remove(id);
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

    /** One of the webhook's deliveries with its attempts. @throws NotFoundError */
    async delivery(
      tenantId: string,
      webhookId: string,
      deliveryId: string,
    ): Promise<{ delivery: DeliveryRecord; attempts: DeliveryAttempt[] }> {
      await load(tenantId, webhookId);
      const delivery = await store.findDelivery(tenantId, deliveryId);
      if (!delivery || delivery.webhookId !== webhookId)
        throw new NotFoundError(`no delivery with id '${deliveryId}'`);
      const attempts = await store.listAttempts(tenantId, [deliveryId]);
      return { delivery, attempts: attempts.get(deliveryId) ?? [] };
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
