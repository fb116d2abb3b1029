/**
 * The MongoDB engine's layout, as data: every collection the engine keeps and
 * every index on it, named. Nothing here touches a server (ensure-layout.ts
 * creates what this describes); docs/mongodb-layout.md gives the reasons, and
 * a test holds it to naming every collection and index declared here.
 *
 * Everything is created once, when a process opens the engine, and never
 * changed while the service runs: tenants, custom objects and custom fields
 * are documents in shared collections keyed by tenant, not collections or
 * indexes of their own, so a catalogue change is a write in a transaction
 * like any other (MongoDB cannot drop a collection inside one) and no count
 * of collections or indexes grows with the tenants.
 */

/** Index keys in order: a field path and its direction, or `$**` under a path for a wildcard. */
export type IndexKeys = Readonly<Record<string, 1 | -1>>;

/** One index: its name (how the engine and the doc refer to it), keys and options. */
export interface IndexLayout {
  readonly name: string;
  readonly keys: IndexKeys;
  readonly unique?: true;
  /** Why it exists: the reads or the guarantee it serves (docs/mongodb-layout.md repeats it). */
  readonly serves: string;
}

/** One collection: its name, what one document is (text without `|`: the doc prints it in a table), and its indexes besides `_id`'s. */
export interface CollectionLayout {
  readonly name: string;
  /** One document's shape, as `{field: meaning}` text for readers (the doc prints it). */
  readonly document: string;
  readonly indexes: readonly IndexLayout[];
}

/** The collections' names, used by every file that reads or writes one (never a literal elsewhere). */
export const COLLECTION = {
  tenants: "tenants",
  users: "users",
  tokens: "tokens",
  customObjects: "custom_objects",
  customFields: "custom_fields",
  standardRecords: "standard_records",
  customRecords: "custom_records",
  recordKeys: "record_keys",
  writeGates: "write_gates",
  referenceGates: "reference_gates",
  objectStorage: "object_storage",
  counters: "counters",
  changeLog: "change_log",
  feedPositions: "feed_positions",
  webhooks: "webhooks",
  configVariables: "config_variables",
  deliveries: "deliveries",
  deliveryAttempts: "delivery_attempts",
} as const;

/** A record collection's indexes: the same for standard and custom objects' records. */
const recordIndexes: readonly IndexLayout[] = [
  {
    name: "record_uid",
    keys: { t: 1, o: 1, u: 1 },
    unique: true,
    serves:
      "a record by UID within its tenant and object; lists in UID order (every default order ends in it)",
  },
  {
    name: "record_fields",
    keys: { t: 1, o: 1, "d.$**": 1 },
    serves:
      "filters and lookups on any field, custom fields included, without an index per field (compound wildcard, MongoDB 7.0+)",
  },
  {
    name: "record_by_uid",
    keys: { u: 1 },
    serves:
      "the $lookup of a reference path, which joins on the UID alone (then keeps the tenant's record of the target object)",
  },
];

/** Every collection of the engine, in the order ensure-layout.ts creates them. */
export const LAYOUT: readonly CollectionLayout[] = [
  {
    name: COLLECTION.tenants,
    document: "{_id: tenant id, name, nameKey: name folded to ASCII lower case, createdAt}",
    indexes: [
      {
        name: "tenant_name",
        keys: { nameKey: 1 },
        unique: true,
        serves: "tenant names unique regardless of ASCII case",
      },
      { name: "tenant_age", keys: { createdAt: 1, _id: 1 }, serves: "tenants listed oldest first" },
    ],
  },
  {
    name: COLLECTION.users,
    document:
      "{_id: user id, t: tenant id, username, usernameKey: folded, email, firstName, lastName, roles, isActive, createdAt}",
    indexes: [
      {
        name: "user_name",
        keys: { t: 1, usernameKey: 1 },
        unique: true,
        serves: "usernames unique within a tenant regardless of ASCII case",
      },
      {
        name: "user_id_order",
        keys: { t: 1, _id: 1 },
        serves: "a tenant's users in id order, a page at a time (copying a store)",
      },
    ],
  },
  {
    name: COLLECTION.tokens,
    document: "{_id: jti, t: tenant id, userId, roles, description, createdAt, expiresAt, revokedAt}",
    indexes: [
      { name: "token_age", keys: { t: 1, createdAt: 1, _id: 1 }, serves: "a tenant's tokens oldest first" },
      {
        name: "token_id_order",
        keys: { t: 1, _id: 1 },
        serves: "a tenant's tokens in jti order, a page at a time (copying a store)",
      },
    ],
  },
  {
    name: COLLECTION.customObjects,
    document: "{_id: object id, t: tenant id, name, nameKey: folded, definition…, tracked, createdAt}",
    indexes: [
      {
        name: "custom_object_name",
        keys: { t: 1, nameKey: 1 },
        unique: true,
        serves: "custom object names unique within a tenant regardless of ASCII case",
      },
    ],
  },
  {
    name: COLLECTION.customFields,
    document: "{_id: field id, t: tenant id, o: object id, name, nameKey: folded, definition…, createdAt}",
    indexes: [
      {
        name: "custom_field_name",
        keys: { t: 1, o: 1, nameKey: 1 },
        unique: true,
        serves: "field names unique within an object regardless of ASCII case",
      },
    ],
  },
  {
    name: COLLECTION.standardRecords,
    document: "{_id: ObjectId, t: tenant id, o: object id, u: UID, d: {field: value…} (record-codec.ts)}",
    indexes: recordIndexes,
  },
  {
    name: COLLECTION.customRecords,
    document: "{_id: ObjectId, t: tenant id, o: object id, u: UID, d: {field: value…} (record-codec.ts)}",
    indexes: recordIndexes,
  },
  {
    name: COLLECTION.recordKeys,
    document: "{_id: {t: tenant id, o: object id, f: field id, v: value}, u: UID of the record holding it}",
    indexes: [],
  },
  {
    name: COLLECTION.writeGates,
    document: "{_id: {t: tenant id, o: object id, g: gate 0…63}, n: writes}",
    indexes: [],
  },
  {
    name: COLLECTION.referenceGates,
    document:
      "{_id: {t: tenant id, o: object id, u: UID of the record referred to, g: gate 0…63}, n: writes}",
    indexes: [],
  },
  {
    name: COLLECTION.objectStorage,
    document:
      "{_id: {t: tenant id, o: object id}, f: [ids of the fields ensureObjectStorage gave the records]}",
    indexes: [],
  },
  {
    name: COLLECTION.counters,
    document:
      '{_id: {t: tenant id, k: "catalogue", "webhooks" or "seq:" + sequence name} or a store-wide version\'s name ("token_revocations"), n}',
    indexes: [],
  },
  {
    name: COLLECTION.changeLog,
    document:
      "{_id: ObjectId, t: tenant id, e: [change entries of one unit of work], n: entries, o?: entries retention deleted from its start, lb: Timestamp below the commit, ct?: commit Timestamp, at: commit time ms (the latest of its entries')}",
    indexes: [
      {
        name: "change_log_commit",
        keys: { ct: 1, lb: 1, _id: 1 },
        serves:
          "the outbox scan after a change stream lost its history, the feed's lag, retention's passed check",
      },
      { name: "change_log_age", keys: { at: 1 }, serves: "retention: the entries committed before a time" },
    ],
  },
  {
    name: COLLECTION.feedPositions,
    document: "{_id: feed reader name, cursor, at}",
    indexes: [],
  },
  {
    name: COLLECTION.webhooks,
    document:
      "{_id: webhook id, t: tenant id, name, nameKey: folded, url, type, query, options, headers: [{name, value}…], secret and previousSecret (sealed), previousSecretUntil, enabled, disabledReason, disabledAt, enabledBy, enabledAt, version, createdAt, updatedAt}",
    indexes: [
      {
        name: "webhook_name",
        keys: { t: 1, nameKey: 1 },
        unique: true,
        serves: "webhook names unique within a tenant regardless of ASCII case; a tenant's webhooks",
      },
    ],
  },
  {
    name: COLLECTION.configVariables,
    document:
      "{_id: ObjectId, t: tenant id, key, configType, value (sealed when secret), description, createdAt, updatedAt}",
    indexes: [
      {
        name: "config_variable_key",
        keys: { t: 1, key: 1 },
        unique: true,
        serves: "one variable per key in a tenant; listed by key in code-point order",
      },
    ],
  },
  {
    name: COLLECTION.deliveries,
    document:
      "{_id: delivery id, t: tenant id, webhookId, eventId, part, status, body, test, attempts, committedAt, createdAt, updatedAt}",
    indexes: [
      {
        name: "delivery_event",
        keys: { t: 1, webhookId: 1, eventId: 1, part: 1 },
        unique: true,
        serves: "one delivery per webhook, event and part (a replayed change logs nothing twice)",
      },
      {
        name: "delivery_list",
        keys: { t: 1, webhookId: 1, createdAt: -1, _id: -1 },
        serves: "a webhook's deliveries, newest first",
      },
      {
        name: "delivery_age",
        keys: { createdAt: 1, _id: 1 },
        serves:
          "retention: every tenant's deliveries created before a time, oldest first, a step at a time from where the last stopped",
      },
    ],
  },
  {
    name: COLLECTION.deliveryAttempts,
    document:
      "{_id: {d: delivery id, n: attempt number} (a delivery's attempts: one range of _id), t: tenant id, startedAt, durationMs, statusCode, responseBody, error, inFlight, request: the request sent as JSON text or null}",
    indexes: [],
  },
];
