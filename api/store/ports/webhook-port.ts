/** The webhook aggregate of the store port: a tenant's webhook definitions and their set's version. */

/** The kinds of webhook (SPEC.md §7, §11): on changes, deferred after a record's instant, on a schedule. */
export type WebhookKind = "graphql" | "graphql_deferred" | "scheduled";

/** How long after its instant a deferred record is due: fixed ms, or read from a field of the record. */
export type DeferredOffset = number | { field: string; default?: number };

/** What a deferred webhook adds: the record's instant field, the offset from it, the filter that must hold at fire time. */
export interface DeferredOptions {
  field: string;
  offset: DeferredOffset;
  filter?: string;
}

/** What a scheduled webhook adds: its 5-field cron expression (UTC). */
export interface ScheduledOptions {
  cron: string;
}

/** A stored webhook; `secret` is sealed (encrypted), never the plaintext. */
export interface WebhookRecord {
  tenantId: string;
  id: string;
  name: string;
  url: string;
  type: WebhookKind;
  /** The subscription (graphql), the deferred query (graphql_deferred); empty for a scheduled webhook. */
  query: string;
  /** What the kind adds: DeferredOptions or ScheduledOptions; null for graphql. */
  options: DeferredOptions | ScheduledOptions | null;
  headers: Record<string, string>;
  secret: string;
  /**
   * The secret before the last rotation, sealed like `secret`: deliveries are signed with it too
   * until `previousSecretUntil` (ms). Both null when there is none.
   */
  previousSecret: string | null;
  previousSecretUntil: number | null;
  enabled: boolean;
  /** Why and when (ms) it was last disabled (a 410 Gone); kept once it is enabled again, as history. */
  disabledReason: string | null;
  disabledAt: number | null;
  /** The user who last enabled it again (POST /webhooks/{id}/enable, or a PUT of its definition), and when (ms). */
  enabledBy: string | null;
  enabledAt: number | null;
  /** Increases with every replacement; compiled subscriptions are cached by it. */
  version: number;
  createdAt: number;
  updatedAt: number;
}

/** A webhook's secrets after a rotation (sealed), and when it happened (ms). */
export interface WebhookSecretRotation {
  secret: string;
  previousSecret: string;
  previousSecretUntil: number;
  at: number;
}

/** Reads of a tenant's webhooks. */
export interface WebhookReader {
  /** The tenant's webhooks, oldest first (`createdAt`, then `id`). */
  listWebhooks(tenantId: string): Promise<WebhookRecord[]>;
  /**
   * Changes (grows) whenever any of the tenant's webhooks is added, changed or deleted, by any
   * process; 0 before its first webhook.
   */
  webhookSetVersion(tenantId: string): Promise<number>;
  /** The tenant's webhook with this id, or null. */
  findWebhook(tenantId: string, id: string): Promise<WebhookRecord | null>;
  /** The tenant's webhook with this name, compared without regard to ASCII case; null when none. */
  findWebhookByName(tenantId: string, name: string): Promise<WebhookRecord | null>;
}

/** Writes of webhooks (inside a unit of work); each one moves `webhookSetVersion` on. */
export interface WebhookWriter {
  /**
   * Adds a webhook as given (its `version` included).
   * @throws ConflictError when another webhook of the tenant has its name (without regard to ASCII case).
   */
  insertWebhook(webhook: WebhookRecord): Promise<void>;
  /**
   * Replaces the definition (name, url, type, query, options, headers, enabled, disabledReason,
   * disabledAt, enabledBy, enabledAt, updatedAt) of the tenant's webhook `webhook.id` and bumps its
   * version; the secrets and creation time stay.
   * @throws ConflictError when another webhook of the tenant has the new name.
   */
  replaceWebhook(webhook: WebhookRecord): Promise<void>;
  /**
   * Sets the tenant's webhook `id`'s secrets (sealed): the new `secret`, and the `previousSecret`
   * that signs beside it until `previousSecretUntil`; bumps its version and updatedAt. False when
   * the tenant has no such webhook.
   */
  rotateWebhookSecret(tenantId: string, id: string, rotation: WebhookSecretRotation): Promise<boolean>;
  /** Deletes the tenant's webhook; false when it has none with this id. */
  deleteWebhook(tenantId: string, id: string): Promise<boolean>;
}
