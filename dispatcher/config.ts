/**
 * The dispatcher process's configuration: read from the environment once in
 * main.ts, validated, frozen, passed down.
 */
import { z } from "zod";
import { booleanFlag, nonNegativeInt, positiveInt, sharedConfigFields } from "../common/config-fields.ts";
import { emptyAsUndefined, loadConfig } from "../common/load-config.ts";
import { parseAllowedRanges } from "./ssrf/destination-policy.ts";

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;

/** Parses `5s,30s,5m,30m,3h` (units ms, s, m, h) to ms. @throws Error naming the bad entries. */
export function parseDurationList(text: string): number[] {
  const entries = text.split(",").map((entry) => entry.trim());
  const parsed = entries.map((entry) => {
    const match = /^(\d+)(ms|s|m|h)$/.exec(entry);
    return match ? Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS] : null;
  });
  const bad = entries.filter((_, i) => parsed[i] === null || parsed[i] === 0);
  if (bad.length > 0)
    throw new Error(`not a positive duration like 5s, 30m or 250ms: ${bad.join(", ") || "(empty)"}`);
  return parsed as number[];
}

/** A zod field from a parser that throws: its message becomes the config problem. */
const parsedWith = <T>(parse: (text: string) => T, fallback: string) =>
  z.preprocess(emptyAsUndefined, z.string().default(fallback)).transform((text, ctx) => {
    try {
      return parse(text);
    } catch (error) {
      ctx.addIssue({ code: "custom", message: (error as Error).message });
      return z.NEVER;
    }
  });

export const DispatcherConfigSchema = z.object({
  ...sharedConfigFields,
  /** Deliveries in flight at once in this process. Default 32. */
  DISPATCH_CONCURRENCY: positiveInt(32),
  /**
   * Attempts still waiting for their endpoint's answer after 0.5 s stop counting against
   * DISPATCH_CONCURRENCY: a spare worker (one more Redis connection, kept once made) takes jobs
   * in the place of each, up to this many at once. Default 64 (eight dead endpoints at the default limit).
   */
  DISPATCH_SLOW_CONCURRENCY: nonNegativeInt(64),
  /** How long shutdown waits for in-flight deliveries before handing them back, in ms. Default 10000. */
  SHUTDOWN_GRACE_MS: positiveInt(10_000),
  /** How long a killed dispatcher's in-flight jobs stay locked before another dispatcher retries them, in ms. Default 30000. */
  DISPATCH_LOCK_MS: positiveInt(30_000),
  /** A whole attempt (DNS, connect, answer) must finish within this, in ms. Default 25000. */
  DELIVERY_TIMEOUT_MS: positiveInt(25_000),
  /**
   * Waits before each retry, comma-separated with units ms/s/m/h; each is
   * jittered ±20%. Attempts in all = entries + 1. Default `5s,30s,5m,30m,3h` (6 attempts).
   */
  DELIVERY_RETRY_SCHEDULE: parsedWith(parseDurationList, "5s,30s,5m,30m,3h"),
  /** Longest `Retry-After` (on 429/503) honoured, in ms; longer ones are cut to it. Default 3600000 (1 h). */
  DELIVERY_RETRY_AFTER_MAX_MS: positiveInt(3_600_000),
  /** Deliveries in flight to one endpoint (host:port) across all dispatchers. Default 8. */
  DELIVERY_ENDPOINT_CONCURRENCY: positiveInt(8),
  /** When an endpoint is at its limit, a job waits about this long (±50%) before trying again, in ms. Default 1000. */
  DELIVERY_ENDPOINT_BUSY_DELAY_MS: positiveInt(1000),
  /**
   * Longest such wait, in ms: jobs refused at a busy endpoint come back spaced at the rate
   * it answers, but never later than this (an endpoint that recovers gets its backlog within it). Default 60000.
   */
  DELIVERY_ENDPOINT_BUSY_MAX_DELAY_MS: positiveInt(60_000),
  /**
   * Non-public address ranges deliveries may reach anyway: comma-separated
   * CIDR ranges or addresses, e.g. `127.0.0.0/8,::1` for local development
   * and tests. Metadata addresses stay refused. Default: none.
   */
  DELIVERY_ALLOW_PRIVATE_NETWORKS: parsedWith(parseAllowedRanges, ""),
  /** Allow plain `http://` webhook URLs (development and tests only). Default false. */
  DELIVERY_ALLOW_HTTP: booleanFlag(false),
  /**
   * Port of the dispatcher's operations listener (`/metrics`, `/healthz`, `/readyz`); 0 runs none.
   * Default 3001 (the API's PORT default is 3000). Two dispatchers on one host need two ports.
   */
  DISPATCHER_PORT: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(0).max(65535).default(3001)),
  /** Interface that listener listens on. Default 127.0.0.1 (set 0.0.0.0 for all). */
  DISPATCHER_HOST: z.preprocess(emptyAsUndefined, z.string().min(1).default("127.0.0.1")),
});

export type DispatcherConfig = z.infer<typeof DispatcherConfigSchema>;

/** Reads the dispatcher configuration. @throws ConfigError listing every problem. */
export function loadDispatcherConfig(env: Record<string, string | undefined>): Readonly<DispatcherConfig> {
  return loadConfig(DispatcherConfigSchema, env);
}
