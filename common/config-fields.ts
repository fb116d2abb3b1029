/**
 * Configuration fields both processes share, as zod pieces. Each process
 * composes its own schema from these (api/config.ts, dispatcher/config.ts).
 */
import { z } from "zod";
import { emptyAsUndefined } from "./load-config.ts";
import { LOG_LEVELS } from "./log.ts";
import { DEFAULT_POOL_SIZE } from "./store/store-location.ts";

/** A Redis connection URL. */
export const redisUrl = z.string().regex(/^rediss?:\/\/\S+$/, "must be a redis:// URL");

export const sharedConfigFields = {
  /** Where the embedded store, generated secrets and the private Redis live. Default `./data`. */
  DATA_DIR: z.preprocess(emptyAsUndefined, z.string().default("./data")),
  /**
   * PostgreSQL connection URL (`postgres://user:password@host:port/database`): selects the
   * PostgreSQL store engine (version 14 or newer). Unset: the embedded store `DATA_DIR/store.sqlite`.
   */
  DATABASE_URL: z.preprocess(
    emptyAsUndefined,
    z
      .string()
      .regex(/^postgres(ql)?:\/\/\S+$/, "must be a postgres:// or postgresql:// URL")
      .optional(),
  ),
  /**
   * Connections each process keeps to PostgreSQL at most (with DATABASE_URL): units of work and
   * reads under way at once. Default DEFAULT_POOL_SIZE (10); mind the server's `max_connections` across every process.
   */
  DATABASE_POOL_SIZE: z.preprocess(
    emptyAsUndefined,
    z.coerce.number().int().min(1).max(1000).default(DEFAULT_POOL_SIZE),
  ),
  /**
   * MongoDB replica-set URL: selects the MongoDB store engine, which is experimental: a process
   * starts on it only with STORE_EXPERIMENTAL=mongodb.
   */
  MONGODB_URL: z.preprocess(
    emptyAsUndefined,
    z
      .string()
      .regex(/^mongodb(\+srv)?:\/\/\S+$/, "must be a mongodb:// or mongodb+srv:// URL")
      .optional(),
  ),
  /**
   * Store engines started on although untested against a real server: `mongodb` lets MONGODB_URL
   * start the processes. Default: unset, MONGODB_URL refuses to start (README, "Store engines").
   */
  STORE_EXPERIMENTAL: z.preprocess(
    emptyAsUndefined,
    z.enum(["mongodb"], { message: "must be mongodb (the one experimental engine)" }).optional(),
  ),
  /** Redis connection URL (`redis://host:port/db`). Required; the start command provides one when unset. */
  REDIS_URL: z.preprocess(emptyAsUndefined, redisUrl),
  /** Prefix of every Redis key, so deployments can share a Redis. Default `tds`. */
  REDIS_PREFIX: z.preprocess(
    emptyAsUndefined,
    z
      .string()
      .regex(/^[A-Za-z0-9:_-]+$/)
      .default("tds"),
  ),
  /** Key material (≥ 32 characters) for encrypting secrets at rest. Generated into `DATA_DIR/secrets-key` when unset. */
  SECRETS_KEY: z.preprocess(
    emptyAsUndefined,
    z.string().min(32, "must be at least 32 characters").optional(),
  ),
  /** `debug`, `info`, `warn`, `error` or `silent`. Default `info`. */
  LOG_LEVEL: z.preprocess(emptyAsUndefined, z.enum(LOG_LEVELS).default("info")),
  /**
   * When set, `GET /metrics` (API and dispatcher) answers only requests with `Authorization: Bearer
   * <METRICS_TOKEN>` (≥ 16 characters). Default: unset, `/metrics` is open to whoever reaches the
   * listen address (HOST / DISPATCHER_HOST, loopback by default).
   */
  METRICS_TOKEN: z.preprocess(
    emptyAsUndefined,
    z.string().min(16, "must be at least 16 characters").optional(),
  ),
  /** The git commit being run, as the deployment knows it (`/version`, `build_info`). Default: the checkout's HEAD, if any. */
  GIT_COMMIT: z.preprocess(
    emptyAsUndefined,
    z
      .string()
      .regex(/^[0-9a-f]{7,64}$/, "must be a hex commit id")
      .optional(),
  ),
};

/** A positive integer read from an environment string, with a default. */
export function positiveInt(defaultValue: number) {
  return z.preprocess(emptyAsUndefined, z.coerce.number().int().positive().default(defaultValue));
}

/** A whole number ≥ 0 read from an environment string, with a default. */
export function nonNegativeInt(defaultValue: number) {
  return z.preprocess(emptyAsUndefined, z.coerce.number().int().min(0).default(defaultValue));
}

/** `true`/`1` or `false`/`0` read from an environment string, with a default. */
export function booleanFlag(defaultValue: boolean) {
  return z.preprocess(
    emptyAsUndefined,
    z
      .enum(["true", "false", "1", "0"], { message: "must be true or false" })
      .default(defaultValue ? "true" : "false")
      .transform((value) => value === "true" || value === "1"),
  );
}
