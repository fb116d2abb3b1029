/**
 * The port's webhooks (webhook-port.ts) as `webhooks` documents and back, and
 * the updates the API's writes make (common/store/mongodb/webhook-document.ts
 * has the document and what the dispatcher shares). Pure: webhook-session.ts
 * hands these documents to the driver.
 */
import { foldAsciiCase } from "../../../../common/store/mongodb/fold-ascii-case.ts";
import {
  headersDocument,
  headersOf,
  optionsDocument,
  type WebhookDocument,
} from "../../../../common/store/mongodb/webhook-document.ts";
import type { WebhookRecord, WebhookSecretRotation } from "../../ports/webhook-port.ts";

/** A tenant's webhooks oldest first, ties by id in code-point order (the other engines' `ORDER BY created_at, id`). */
export const WEBHOOK_LIST_SORT = { createdAt: 1, _id: 1 } as const;

/**
 * What a webhook's definition sets, on insert and on replace alike: its name and folded key, url,
 * kind, query, options, headers, the enabled state and its history.
 */
const definitionOf = (w: WebhookRecord) => ({
  name: w.name,
  nameKey: foldAsciiCase(w.name),
  url: w.url,
  type: w.type,
  query: w.query,
  options: optionsDocument(w.options),
  headers: headersDocument(w.headers),
  enabled: w.enabled,
  disabledReason: w.disabledReason,
  disabledAt: w.disabledAt,
  enabledBy: w.enabledBy,
  enabledAt: w.enabledAt,
});

/** The document a new webhook is inserted as: everything given, its version included. */
export const webhookDocument = (w: WebhookRecord): WebhookDocument => ({
  _id: w.id,
  t: w.tenantId,
  ...definitionOf(w),
  secret: w.secret,
  previousSecret: w.previousSecret,
  previousSecretUntil: w.previousSecretUntil,
  version: w.version,
  createdAt: w.createdAt,
  updatedAt: w.updatedAt,
});

/** A stored document as the port's webhook. */
export const toWebhook = (doc: WebhookDocument): WebhookRecord => ({
  tenantId: doc.t,
  id: doc._id,
  name: doc.name,
  url: doc.url,
  type: doc.type,
  query: doc.query,
  options: doc.options,
  headers: headersOf(doc),
  secret: doc.secret,
  previousSecret: doc.previousSecret,
  previousSecretUntil: doc.previousSecretUntil,
  enabled: doc.enabled,
  disabledReason: doc.disabledReason,
  disabledAt: doc.disabledAt,
  enabledBy: doc.enabledBy,
  enabledAt: doc.enabledAt,
  version: doc.version,
  createdAt: doc.createdAt,
  updatedAt: doc.updatedAt,
});

/**
 * The update replaceWebhook makes: the definition as given (name and its folded key, url, kind,
 * query, options, headers, the enabled state and its history, updatedAt), the version moved on;
 * the id, tenant, secrets, version given and creation time stay as stored.
 */
export const replaceWebhookUpdate = (w: WebhookRecord) => ({
  $set: { ...definitionOf(w), updatedAt: w.updatedAt },
  $inc: { version: 1 },
});

/** The update rotateWebhookSecret makes: the new secret, the previous one and its end, updatedAt; the version moved on. */
export const rotateSecretUpdate = (r: WebhookSecretRotation) => ({
  $set: {
    secret: r.secret,
    previousSecret: r.previousSecret,
    previousSecretUntil: r.previousSecretUntil,
    updatedAt: r.at,
  },
  $inc: { version: 1 },
});
