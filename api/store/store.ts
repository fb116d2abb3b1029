/**
 * The store port: everything the API keeps, behind one interface that each
 * engine (SQLite now, MongoDB later) implements. Every method is scoped by
 * tenant where data belongs to one. Methods are async so an engine over the
 * network fits the same shape.
 */

import type { CheckedFilter } from "../eql/checked-filter.ts";
import type { OrderTerm } from "../eql/parse-order-by.ts";
import type { CustomDefinitions, FieldDef, ObjectDef } from "../model/catalogue.ts";
import type { ChangeEntry, FieldValue, LoggedChange, RecordValues } from "../model/record-values.ts";
import type { ReadNode, ReadValue } from "./read-tree.ts";

/**
 * A to-one lookup read together with the records (a LEFT JOIN), instead of by a second query:
 * the records' `reference`, and the fields of its `target` to read (UID among them).
 */
export interface JoinedLookup {
  reference: FieldDef;
  target: ObjectDef;
  fields: readonly FieldDef[];
}

/**
 * Where a record read with joined lookups carries what they found, by reference field name:
 * the target record, or null when the reference is empty or points at nothing.
 */
export const LOOKUPS: unique symbol = Symbol("joined lookups");
export type WithLookups = RecordValues & { [LOOKUPS]?: Record<string, RecordValues | null> };

/** A page of records: filtered, ordered (UID last), after a keyset position, skipping `offset`. */
export interface ListQuery {
  filter: CheckedFilter | null;
  order: readonly OrderTerm[];
  /** Sort-key values of the row to start after (from a cursor), or null. */
  after: readonly (string | number | null)[] | null;
  offset: number;
  limit: number;
  /** What NOW() means, ms since the epoch. */
  now: number;
  /** Read only these fields (UID always); every field when absent. */
  fields?: readonly FieldDef[];
  /** To-one lookups to read in the same statement. */
  lookups?: readonly JoinedLookup[];
}

/** A listed record with its sort-key values (what its cursor encodes). */
export interface ListedRecord {
  values: RecordValues;
  sortKey: (string | number | null)[];
}

/** Records related to several parents at once: children whose `reference` points at one of `parentUids`. */
export interface RelatedQuery {
  filter: CheckedFilter | null;
  order: readonly OrderTerm[];
  /** At most this many children per parent. */
  limit: number;
  now: number;
  /** Read only these fields (UID and the reference always); every field when absent. */
  fields?: readonly FieldDef[];
  /** To-one lookups to read in the same statement. */
  lookups?: readonly JoinedLookup[];
}

export const ROLES = ["administrator", "scheduler", "resource"] as const;
export type Role = (typeof ROLES)[number];

export interface Tenant {
  id: string;
  name: string;
  createdAt: number;
}

export interface User {
  id: string;
  tenantId: string;
  username: string;
  email: string;
  firstName: string | null;
  lastName: string;
  roles: Role[];
  isActive: boolean;
  createdAt: number;
}

/** A token's metadata. The token text itself is never stored. */
export interface TokenRecord {
  jti: string;
  tenantId: string;
  userId: string;
  roles: Role[];
  description: string | null;
  createdAt: number;
  /** ms since the epoch, or null for a long-lived token. */
  expiresAt: number | null;
  revokedAt: number | null;
}

export const CONFIG_TYPES = ["plain-text", "secret"] as const;

/** A tenant's config variable; a secret's `value` is sealed (encrypted), never the plaintext. */
export interface ConfigVariable {
  tenantId: string;
  key: string;
  configType: (typeof CONFIG_TYPES)[number];
  value: string;
  description: string | null;
  createdAt: number;
  updatedAt: number;
}

/** A stored webhook; `secret` is sealed (encrypted), never the plaintext. */
export interface WebhookRecord {
  tenantId: string;
  id: string;
  name: string;
  url: string;
  type: "graphql";
  query: string;
  headers: Record<string, string>;
  secret: string;
  enabled: boolean;
  disabledReason: string | null;
  /** Increases with every replacement; compiled subscriptions are cached by it. */
  version: number;
  createdAt: number;
  updatedAt: number;
}

export const DELIVERY_STATUSES = ["pending", "delivering", "succeeded", "failed"] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export interface DeliveryRecord {
  tenantId: string;
  id: string;
  webhookId: string;
  mutationId: string;
  /** Which of the mutation's deliveries to the webhook this is, from 0 (see `DeliveryJob.part`). */
  part: number;
  status: DeliveryStatus;
  /** The JSON array sent (as text). */
  body: string;
  attempts: number;
  committedAt: number;
  createdAt: number;
  updatedAt: number;
}

export interface DeliveryAttempt {
  attempt: number;
  startedAt: number;
  durationMs: number;
  statusCode: number | null;
  responseBody: string | null;
  error: string | null;
}

export interface DeliveryQuery {
  status?: DeliveryStatus;
  /** Created at or after, ms. */
  since?: number;
  /** Created before, ms. */
  until?: number;
  /** Keyset: deliveries created before this (createdAt, id), newest first. */
  before?: { createdAt: number; id: string };
  limit: number;
}

/** Where a delivery stands in the delivery log's age order (oldest first; `id` breaks ties). */
export interface DeliveryAge {
  createdAt: number;
  id: string;
}

/** One step of pruning the delivery log. */
export interface DeliveryPruneStep {
  /** Deliveries deleted, with their attempts. */
  deleted: number;
  /** Where the next step goes on from; null when no delivery created before the cut-off is left to look at. */
  next: DeliveryAge | null;
}

/** Reads, usable inside and outside a unit of work. */
export interface StoreReader {
  findTenantById(tenantId: string): Promise<Tenant | null>;
  findTenantByName(name: string): Promise<Tenant | null>;
  listTenants(): Promise<Tenant[]>;
  findUser(tenantId: string, userId: string): Promise<User | null>;
  findUserByUsername(tenantId: string, username: string): Promise<User | null>;
  findToken(tenantId: string, jti: string): Promise<TokenRecord | null>;
  listTokens(tenantId: string): Promise<TokenRecord[]>;
  /** The tenant's catalogue version: 0 until its first custom definition. */
  catalogueVersion(tenantId: string): Promise<number>;
  loadCustomDefinitions(tenantId: string): Promise<CustomDefinitions>;

  /**
   * The records of `object` with these UIDs (those that exist, in no particular order),
   * with only `fields` (UID always) when given.
   */
  findRecords(
    tenantId: string,
    object: ObjectDef,
    uids: readonly string[],
    fields?: readonly FieldDef[],
  ): Promise<RecordValues[]>;
  /** A record whose `field` equals `value`, other than `exceptUid`; null when none. */
  findRecordByValue(
    tenantId: string,
    object: ObjectDef,
    field: FieldDef,
    value: FieldValue,
    exceptUid?: string,
  ): Promise<RecordValues | null>;
  /** How many records of `source` point at `uid` through its reference `field`. */
  countReferencing(tenantId: string, source: ObjectDef, field: FieldDef, uid: string): Promise<number>;
  listConfigVariables(tenantId: string): Promise<ConfigVariable[]>;
  listWebhooks(tenantId: string): Promise<WebhookRecord[]>;
  /** Changes (grows) whenever any of the tenant's webhooks is added, changed or deleted, by any process. */
  webhookSetVersion(tenantId: string): Promise<number>;
  findWebhook(tenantId: string, id: string): Promise<WebhookRecord | null>;
  findWebhookByName(tenantId: string, name: string): Promise<WebhookRecord | null>;
  /** A webhook's deliveries, newest first. */
  listDeliveries(tenantId: string, webhookId: string, query: DeliveryQuery): Promise<DeliveryRecord[]>;
  findDelivery(tenantId: string, id: string): Promise<DeliveryRecord | null>;
  listAttempts(tenantId: string, deliveryIds: readonly string[]): Promise<Map<string, DeliveryAttempt[]>>;
  /** The persisted position of the change-feed reader `name` (0 before its first batch). */
  feedPosition(name: string): Promise<number>;
  findConfigVariable(tenantId: string, key: string): Promise<ConfigVariable | null>;
  listRecords(tenantId: string, object: ObjectDef, query: ListQuery): Promise<ListedRecord[]>;
  countRecords(
    tenantId: string,
    object: ObjectDef,
    filter: CheckedFilter | null,
    now: number,
  ): Promise<number>;
  /** One query for all parents: children of `object` whose `reference` is in `parentUids`. */
  listRelated(
    tenantId: string,
    object: ObjectDef,
    reference: FieldDef,
    parentUids: readonly string[],
    query: RelatedQuery,
  ): Promise<RecordValues[]>;
  /**
   * The JSON text of the answer `tree` describes, with `values` in its slots, read in one go.
   * Optional: an engine without it answers through the other reads. Throws when a record breaks
   * what the tree promises (a null where it says a value), so the caller can answer the long way.
   */
  readJson?(tenantId: string, tree: ReadNode, values: readonly ReadValue[]): Promise<string>;
  /** Change-log entries after `position`, in commit order, at most `limit`. */
  readChanges(afterPosition: number, limit: number): Promise<LoggedChange[]>;
}

/** Writes; only available inside a unit of work, so they commit or roll back together. */
export interface StoreWriter extends StoreReader {
  insertTenant(tenant: Tenant): Promise<void>;
  insertUser(user: User): Promise<void>;
  insertToken(token: TokenRecord): Promise<void>;
  /** Marks a token revoked; false when the tenant has no such token. */
  revokeToken(tenantId: string, jti: string, at: number): Promise<boolean>;

  /** Creates the record storage of a standard object, or adds the fields it lacks. Idempotent. */
  ensureObjectStorage(tenantId: string, object: ObjectDef): Promise<void>;
  /** Saves a custom object's definition and creates its storage for `object.fields`. */
  createCustomObject(tenantId: string, object: ObjectDef): Promise<void>;
  /** Saves a custom field's definition and adds its storage to `object` (existing rows get its default). */
  addCustomField(tenantId: string, object: ObjectDef, field: FieldDef): Promise<void>;
  /** Removes a custom object's definition, its fields' definitions and its records. */
  deleteCustomObject(tenantId: string, object: ObjectDef): Promise<void>;
  /** Removes a custom field's definition and its values. */
  deleteCustomField(tenantId: string, object: ObjectDef, field: FieldDef): Promise<void>;
  /** Sets a custom object's tracking; false when the tenant has no such object. */
  setObjectTracked(tenantId: string, objectId: string, tracked: boolean): Promise<boolean>;
  /** Increments and returns the tenant's catalogue version. */
  bumpCatalogueVersion(tenantId: string): Promise<number>;

  /** Inserts a record with all of `object`'s fields (absent ones null). */
  insertRecord(tenantId: string, object: ObjectDef, values: RecordValues): Promise<void>;
  /** Sets the given fields of the record `uid`. */
  updateRecord(tenantId: string, object: ObjectDef, uid: string, values: RecordValues): Promise<void>;
  deleteRecord(tenantId: string, object: ObjectDef, uid: string): Promise<void>;
  /** The next value (1, 2, ...) of the tenant's sequence `name`; never reused, even after a rollback elsewhere commits. */
  nextSequenceValue(tenantId: string, name: string): Promise<number>;
  /** Creates or replaces a config variable (keeping its creation time). */
  putConfigVariable(variable: ConfigVariable): Promise<void>;
  /** False when the tenant has no such variable. */
  deleteConfigVariable(tenantId: string, key: string): Promise<boolean>;
  insertWebhook(webhook: WebhookRecord): Promise<void>;
  /** Replaces the definition (name, url, query, headers) and bumps the version. */
  replaceWebhook(webhook: WebhookRecord): Promise<void>;
  deleteWebhook(tenantId: string, id: string): Promise<boolean>;
  /** Inserts deliveries; one that exists already (same webhook and mutation) is left as it is. */
  insertDeliveries(deliveries: readonly DeliveryRecord[]): Promise<void>;
  /** Sets a delivery back to `pending` for a manual retry. */
  resetDelivery(tenantId: string, id: string, at: number): Promise<void>;
  setFeedPosition(name: string, position: number, at: number): Promise<void>;
  /** Appends change-log entries, in the order given. */
  appendChanges(entries: readonly ChangeEntry[]): Promise<void>;
  /**
   * Looks at the next `limit` deliveries created before `before`, oldest first, from `after` on
   * (the start when null), and deletes those finished (`succeeded` or `failed`) and unchanged since
   * `before`, with their attempts. Unfinished ones stay: they are still being delivered.
   */
  pruneDeliveries(before: number, limit: number, after: DeliveryAge | null): Promise<DeliveryPruneStep>;
  /**
   * Deletes at most `limit` of the oldest change-log entries committed before `before` that every
   * change-feed reader has passed; returns how many.
   */
  pruneChanges(before: number, limit: number): Promise<number>;
}

export interface Store extends StoreReader {
  readonly engine: "sqlite" | "mongodb";
  /**
   * Runs `work` in one transaction: everything it writes commits together when
   * it resolves, and nothing is kept when it throws (the error is rethrown).
   * Units of work never interleave their writes.
   */
  unitOfWork<T>(work: (tx: StoreWriter) => Promise<T>): Promise<T>;
  /**
   * Says a request has just arrived. Reads may share a snapshot for a while
   * (SQLite: one turn of the event loop); from this call on, the reads made
   * for the request see every commit that finished before it arrived.
   */
  requestArrived(): void;
  /** Reads from this call on see every commit that finished before it (for readers outside requests). */
  refreshReads(): void;
  /** True when the engine answers a trivial query. */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}
