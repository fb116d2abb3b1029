/**
 * The `webhooks` collection of the MongoDB store as both processes meet it
 * (layout.ts): one document per webhook, the filters and updates that find
 * and change one, and the tenant's webhook set version (its `webhooks`
 * counter). The API's store maps whole definitions
 * (api/store/mongodb/webhooks/webhook-mapping.ts); the dispatcher reads what a
 * delivery needs (`toDeliveryWebhook`) and disables one on 410 Gone
 * (`disableWebhookUpdate`, then bumpWebhookSetVersion of webhook-writes.ts).
 * Pure: documents in, documents out.
 */

import type { DeliveryWebhook } from "../../delivery-log/delivery-store.ts";
import { foldAsciiCase } from "./fold-ascii-case.ts";
import { COLLECTION } from "./layout.ts";

/** A header as stored: its name is a value, not a field name (an HTTP token may hold `.` or start with `$`). */
export interface HeaderDocument {
  name: string;
  value: string;
}

/** What a webhook's kind adds, as stored (the port's DeferredOptions or ScheduledOptions); null for graphql. */
export type WebhookOptionsDocument =
  | { field: string; offset: number | { field: string; default?: number }; filter?: string }
  | { cron: string };

/** One document of `webhooks`. Times are ms since the epoch; secrets are sealed (secret-box.ts), never plaintext. */
export interface WebhookDocument {
  /** The webhook's id (a UUID the API draws). */
  _id: string;
  /** Its tenant. */
  t: string;
  name: string;
  /** `name` folded to ASCII lower case: the unique index `webhook_name` holds names unique regardless of ASCII case. */
  nameKey: string;
  url: string;
  type: "graphql" | "graphql_deferred" | "scheduled";
  query: string;
  options: WebhookOptionsDocument | null;
  /** In the order given. */
  headers: HeaderDocument[];
  secret: string;
  /** The secret before the last rotation, signing too until `previousSecretUntil`; both null when none. */
  previousSecret: string | null;
  previousSecretUntil: number | null;
  enabled: boolean;
  disabledReason: string | null;
  disabledAt: number | null;
  enabledBy: string | null;
  enabledAt: number | null;
  /** Grows with every change of this webhook (the dispatcher's attempts are built against it). */
  version: number;
  createdAt: number;
  updatedAt: number;
}

/** A tenant's counter document (`counters`): here its webhook set version. */
export interface CounterDocument {
  _id: { t: string; k: string };
  n: number;
}

/** The tenant's webhook `id` (the tenant is part of the filter: an id of another tenant's webhook finds nothing). */
export const webhookFilter = (tenantId: string, id: string) => ({ _id: id, t: tenantId });

/** The tenant's webhook named `name`, without regard to ASCII case. */
export const webhookNameFilter = (tenantId: string, name: string) => ({
  t: tenantId,
  nameKey: foldAsciiCase(name),
});

/** The headers as stored, in their order. */
export const headersDocument = (headers: Readonly<Record<string, string>>): HeaderDocument[] =>
  Object.entries(headers).map(([name, value]) => ({ name, value }));

/** The headers read back as the object the port and the dispatcher use. */
export const headersOf = (doc: Pick<WebhookDocument, "headers">): Record<string, string> =>
  Object.fromEntries(doc.headers.map((header) => [header.name, header.value]));

/**
 * The options as stored: keys whose value is undefined left out, since the driver stores an
 * undefined value as null and the port's optional keys (`filter`, `default`) must read back absent.
 */
export function optionsDocument(options: WebhookOptionsDocument | null): WebhookOptionsDocument | null {
  if (options === null) return null;
  if ("cron" in options) return { cron: options.cron };
  const { offset, filter } = options;
  return {
    field: options.field,
    offset:
      typeof offset === "number"
        ? offset
        : { field: offset.field, ...(offset.default === undefined ? {} : { default: offset.default }) },
    ...(filter === undefined ? {} : { filter }),
  };
}

/** The fields a delivery reads of a webhook document (a find's projection). */
export const DELIVERY_WEBHOOK_PROJECTION = {
  _id: 1,
  t: 1,
  url: 1,
  headers: 1,
  secret: 1,
  previousSecret: 1,
  previousSecretUntil: 1,
  enabled: 1,
  disabledReason: 1,
  version: 1,
} as const;

/** A webhook document (at least DELIVERY_WEBHOOK_PROJECTION's fields) as a delivery needs it. */
export const toDeliveryWebhook = (
  doc: Pick<WebhookDocument, keyof typeof DELIVERY_WEBHOOK_PROJECTION>,
): DeliveryWebhook => ({
  tenantId: doc.t,
  id: doc._id,
  url: doc.url,
  headers: headersOf(doc),
  sealedSecret: doc.secret,
  previousSealedSecret: doc.previousSecret ?? null,
  previousSecretUntil: doc.previousSecretUntil ?? null,
  enabled: doc.enabled,
  disabledReason: doc.disabledReason ?? null,
  version: doc.version,
});

/**
 * The update that disables a webhook (the dispatcher, on 410 Gone): not enabled, the reason and
 * `at` kept as when, its version moved on. Applied with webhookFilter; when it matched, the
 * caller moves the tenant's webhook set version in the same transaction (webhook-writes.ts).
 */
export const disableWebhookUpdate = (reason: string, at: number) => ({
  $set: { enabled: false, disabledReason: reason, disabledAt: at, updatedAt: at },
  $inc: { version: 1 },
});

/**
 * The tenant's webhook set version: its `webhooks` counter, upserted from 1, moved on by every
 * write that changes one of the tenant's webhooks, in that write's transaction. Readers cache the
 * tenant's compiled webhooks by it; two writes of one tenant's webhooks both write this document,
 * so the second meets a write conflict and runs again.
 */
export const webhookSetCounter = (tenantId: string) => ({
  collection: COLLECTION.counters,
  filter: { _id: { t: tenantId, k: "webhooks" } },
  update: { $inc: { n: 1 } },
  upsert: true,
});

/** The set version a counter document read with webhookSetCounter's filter says: 0 before the first webhook write. */
export const webhookSetVersionOf = (counter: Pick<CounterDocument, "n"> | null): number => counter?.n ?? 0;
