/**
 * The API process's configuration: read from the environment once in main.ts,
 * validated, frozen, passed down. Defaults are documented beside each option
 * and in the README.
 */
import { z } from "zod";
import { booleanFlag, positiveInt, sharedConfigFields } from "../common/config-fields.ts";
import { emptyAsUndefined, loadConfig } from "../common/load-config.ts";

/** The highest CUSTOM_MAX_FIELDS_PER_OBJECT accepted: with standard and system fields, well under 1600 columns. */
export const MAX_FIELDS_PER_OBJECT_CEILING = 1000;

/**
 * The most change-log partitions (FEED_PARTITIONS): each is a Redis lease, a reader and a poll of the
 * store every FEED_POLL_MS on whichever process holds it, so far more than the API processes buy
 * nothing but idle queries.
 */
const MAX_FEED_PARTITIONS = 256;

/** The largest statement_timeout PostgreSQL takes (an int of ms). */
const MAX_STATEMENT_TIMEOUT_MS = 2_147_483_647;

export const ApiConfigSchema = z.object({
  ...sharedConfigFields,
  /** TCP port of the HTTP API. Default 3000. */
  PORT: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(0).max(65535).default(3000)),
  /** Interface to listen on. Default 127.0.0.1 (set 0.0.0.0 to listen on all). */
  HOST: z.preprocess(emptyAsUndefined, z.string().min(1).default("127.0.0.1")),
  /** HS256 signing secret (≥ 32 characters). Generated into `DATA_DIR/jwt-secret` on first start when unset. */
  JWT_SECRET: z.preprocess(emptyAsUndefined, z.string().min(32, "must be at least 32 characters").optional()),
  /**
   * How long a token's lookup (its revocation state, its user) is cached per process, in ms. A
   * revocation drops it sooner on every API process (see TOKEN_REVOCATION_CHECK_MS). Default 5000.
   */
  TOKEN_CACHE_TTL_MS: positiveInt(5000),
  /**
   * How often, at most, each API process reads the store's revocation version, in ms, dropping its
   * cached token lookups when it moved. A revocation reaches the other processes at once over Redis;
   * this bounds how late one is seen when that message is lost (Redis away). Default 1000.
   */
  TOKEN_REVOCATION_CHECK_MS: positiveInt(1000),
  /** How long shutdown waits for in-flight requests before closing connections, in ms. Default 5000. */
  SHUTDOWN_GRACE_MS: positiveInt(5000),
  /** How many tenants' catalogues and GraphQL schemas are kept in memory (least recently used go). Default 1000. */
  TENANT_CACHE_SIZE: positiveInt(1000),
  /** Largest (and default) page size `first` of list queries. Default 200. */
  GRAPHQL_MAX_PAGE_SIZE: positiveInt(200),
  /** Largest `limit` of reverse-list fields. Default 2000. */
  GRAPHQL_MAX_RELATED_LIMIT: positiveInt(2000),
  /** Deepest selection nesting of a GraphQL document. Default 12. */
  GRAPHQL_MAX_DEPTH: positiveInt(12),
  /**
   * Largest estimated cost of a query: rows listed (sizes multiply down the tree) and skipped by
   * `offset`, plus one per field selection once fragments are spread. Default 100000.
   */
  GRAPHQL_MAX_COST: positiveInt(100_000),
  /** Most aliased fields in a document (so at most this many aliased mutation operations). Default 100. */
  GRAPHQL_MAX_ALIASES: positiveInt(100),
  /** Largest `offset` of a list query (the store reads past every skipped row). Default 10000. */
  GRAPHQL_MAX_OFFSET: positiveInt(10_000),
  /**
   * Most list queries (`jobs(...)`) and `totalCount`s in one request: each is a store query that may
   * read the tenant's whole table. Default 10.
   */
  GRAPHQL_MAX_SCANS: positiveInt(10),
  /**
   * Read a whole query's answer in the store, in one statement, where the store can (connections
   * without cursors, records by UID, fields, lookups, reverse lists); off, every field is resolved.
   * Default true.
   */
  GRAPHQL_STORE_READS: booleanFlag(true),
  /**
   * Most custom fields one object (custom or standard) may have. Each is a column, so this stays far
   * below the storage engines' column limits (SQLite 2000, PostgreSQL 1600, dropped columns included);
   * at most 1000. Default 500.
   */
  CUSTOM_MAX_FIELDS_PER_OBJECT: z.preprocess(
    emptyAsUndefined,
    z.coerce.number().int().positive().max(MAX_FIELDS_PER_OBJECT_CEILING).default(500),
  ),
  /**
   * Memory the GraphQL document cache may hold, in estimated bytes: parsed and validated documents,
   * their compiled operations and read plans, least recently used dropped first. Only documents
   * likely to repeat are kept (those declaring variables, or seen twice). Default 16777216 (16 MiB).
   */
  GRAPHQL_DOCUMENT_CACHE_BYTES: positiveInt(16 * 1024 * 1024),
  /** Accept plain `http://` webhook URLs (local development and tests only). Default false. */
  WEBHOOKS_ALLOW_HTTP: booleanFlag(false),
  /**
   * Most fields a webhook subscription may select under `data` and `previous` together (each is
   * written into every element of every delivery). Default 200.
   */
  WEBHOOK_MAX_SELECTION_FIELDS: positiveInt(200),
  /**
   * Largest body of one delivery, in bytes: one mutation's elements for one webhook that would make
   * a larger one are split over several deliveries, each element whole, in order. Default 1 MiB.
   */
  DELIVERY_MAX_BODY_BYTES: positiveInt(1024 * 1024),
  /**
   * Least offset, in ms, of a deferred webhook due relative to CreatedDate or LastModifiedDate
   * (SPEC.md §11): a smaller one would fire on the write itself. Default 5000; tests lower it.
   */
  DEFERRED_WEBHOOKS_MIN_OFFSET_MS: positiveInt(5000),
  /**
   * Accept a 6-field cron (seconds first) on scheduled webhooks, so tests need not wait whole
   * minutes. Tests only: the contract's smallest interval is one minute. Default false.
   */
  SCHEDULED_WEBHOOKS_ALLOW_SECONDS: booleanFlag(false),
  /** Change-feed batch size (entries read per round). Default 500. */
  FEED_BATCH_SIZE: positiveInt(500),
  /** How often the change feed looks for changes committed elsewhere, in ms. Default 250. */
  FEED_POLL_MS: positiveInt(250),
  /**
   * How long the change feed's Redis lease lives unless renewed, in ms: after
   * an API process dies, another (or its restart) takes over the feed within
   * this. Default 15000.
   */
  FEED_LEASE_MS: positiveInt(15_000),
  /**
   * How many partitions the change log is split into (by tenant), each read by one API process at a
   * time: fixed when the store is created (PostgreSQL: by the first API process to open it; default
   * 16), at most 256. An existing store keeps its own, and a process given another is refused at
   * start. The embedded SQLite store keeps one (one machine). Unset: the store's (a new one's default).
   */
  FEED_PARTITIONS: z.preprocess(
    emptyAsUndefined,
    z.coerce.number().int().positive().max(MAX_FEED_PARTITIONS).optional(),
  ),
  /**
   * On PostgreSQL, the longest a statement of this process's store may run, in ms (the server's
   * statement_timeout on every pooled connection): past it the server cancels it and the request
   * answers LIMIT_EXCEEDED (REST `400 limit_exceeded`). It also bounds how long a tenant's read
   * waits for its share of the pool. Migrations and a catalogue change's index build are free of
   * it. 0: no limit. Default 10000. SQLite and MongoDB ignore it.
   */
  STORE_STATEMENT_TIMEOUT_MS: z.preprocess(
    emptyAsUndefined,
    z.coerce.number().int().min(0).max(MAX_STATEMENT_TIMEOUT_MS).default(10_000),
  ),
  /**
   * How long finished deliveries (succeeded or failed) and their attempts stay in the delivery log,
   * in days from their last change. Unfinished ones are kept. Default 30.
   */
  DELIVERY_LOG_RETENTION_DAYS: positiveInt(30),
  /** How long change-log entries stay after their commit (and until the change feed has passed them), in hours. Default 24. */
  CHANGE_LOG_RETENTION_HOURS: positiveInt(24),
  /** How often the API deletes what the two retentions let go, in ms (also once at start). Default 600000. */
  RETENTION_SWEEP_MS: positiveInt(600_000),
  /** Largest accepted request body in bytes. Default 1 MiB. */
  MAX_BODY_BYTES: positiveInt(1024 * 1024),
  /**
   * Browser origins allowed to call the API cross-origin, comma-separated (`https://app.example.com`),
   * or `*` for any origin. Default empty: no cross-origin access (preflights are refused).
   */
  CORS_ORIGINS: z.preprocess(
    emptyAsUndefined,
    z
      .string()
      .default("")
      .transform((text) =>
        text
          .split(",")
          .map((origin) => origin.trim())
          .filter((origin) => origin !== ""),
      )
      .pipe(
        z.array(z.string().refine(isOriginOrAny, "must be an origin like https://app.example.com, or *")),
      ),
  ),
  /** Most operations in one batched GraphQL request (a JSON array body). Default 10. */
  GRAPHQL_MAX_BATCH: positiveInt(10),
  /**
   * Bytes of query text one tenant's automatic persisted queries may hold in one API process; the
   * least recently used go first. Default 1 MiB.
   */
  GRAPHQL_PERSISTED_QUERIES_TENANT_BYTES: positiveInt(1024 * 1024),
  /** Bytes of query text all tenants' persisted queries may hold together in one API process. Default 32 MiB. */
  GRAPHQL_PERSISTED_QUERIES_TOTAL_BYTES: positiveInt(32 * 1024 * 1024),
  /**
   * Requests per second one API token may make, on average, across all API processes; 0 turns the
   * per-token limit off. Default 500 (half the tenant's, so one busy client leaves room for the others).
   */
  RATE_LIMIT_TOKEN_PER_SECOND: requestRate(500),
  /** How many requests one token may make at once before its rate applies (the bucket's size). Default 1000. */
  RATE_LIMIT_TOKEN_BURST: positiveInt(1000),
  /**
   * Requests per second all tokens of one tenant may make together, across all API processes; 0
   * turns the per-tenant limit off. Default 1000 (the write rate the service is measured at).
   */
  RATE_LIMIT_TENANT_PER_SECOND: requestRate(1000),
  /** How many requests one tenant may make at once before its rate applies. Default 2000. */
  RATE_LIMIT_TENANT_BURST: positiveInt(2000),
  /** Live-subscription WebSocket connections one token may hold on one API process. Default 10. */
  LIVE_MAX_CONNECTIONS_PER_TOKEN: positiveInt(10),
  /** Subscriptions one live connection may hold; past it a subscribe is answered with an error. Default 100. */
  LIVE_MAX_SUBSCRIPTIONS_PER_CONNECTION: positiveInt(100),
  /** Largest message a live client may send, in bytes; Bun closes a larger one with 1009. Default 64 KiB. */
  LIVE_MAX_MESSAGE_BYTES: positiveInt(64 * 1024),
  /**
   * Bytes a live socket may hold unsent; a client that reads slower than its events arrive is
   * closed (1013) once past it, so it cannot make the process's memory grow. Default 1 MiB.
   */
  LIVE_MAX_BUFFERED_BYTES: positiveInt(1024 * 1024),
  /** How long a live client has to send `connection_init` before it is closed (4408), in ms. Default 10 s. */
  LIVE_INIT_TIMEOUT_MS: positiveInt(10_000),
  /** How often a live connection is sent the protocol's keep-alive (`ping` or `ka`), in ms. Default 12 s. */
  LIVE_KEEP_ALIVE_MS: positiveInt(12_000),
  /**
   * How often each API process re-reads the tokens its live connections hold, closing those of a
   * revoked or expired token or a deactivated user (4403), in ms. Default 2000.
   */
  LIVE_AUTH_RECHECK_MS: positiveInt(2000),
  /**
   * How often each API process announces on Redis the tenants it holds live connections of, in ms;
   * a tenant not announced for three of these is taken as unheard, and its changes are no longer
   * published. Default 10 s.
   */
  LIVE_AUDIENCE_REFRESH_MS: positiveInt(10_000),
});

/** `*`, or an origin exactly as a browser sends it: scheme, host and port only, no trailing slash. */
function isOriginOrAny(text: string): boolean {
  if (text === "*") return true;
  try {
    const url = new URL(text);
    return (url.protocol === "https:" || url.protocol === "http:") && url.origin === text;
  } catch {
    return false;
  }
}

/** A rate in requests per second read from an environment string (fractions allowed, 0 = off). */
function requestRate(defaultValue: number) {
  return z.preprocess(emptyAsUndefined, z.coerce.number().finite().min(0).default(defaultValue));
}

export type ApiConfig = z.infer<typeof ApiConfigSchema>;

/** Reads the API configuration. @throws ConfigError listing every problem. */
export function loadApiConfig(env: Record<string, string | undefined>): Readonly<ApiConfig> {
  return loadConfig(ApiConfigSchema, env);
}
