/**
 * The dispatcher process's configuration: read from the environment once in
 * main.ts, validated, frozen, passed down.
 */
import { z } from "zod";
import { positiveInt, sharedConfigFields } from "../common/config-fields.ts";
import { loadConfig } from "../common/load-config.ts";

export const DispatcherConfigSchema = z.object({
  ...sharedConfigFields,
  /** Deliveries in flight at once in this process. Default 32. */
  DISPATCH_CONCURRENCY: positiveInt(32),
  /** How long shutdown waits for in-flight deliveries before handing them back, in ms. Default 10000. */
  SHUTDOWN_GRACE_MS: positiveInt(10_000),
});

export type DispatcherConfig = z.infer<typeof DispatcherConfigSchema>;

/** Reads the dispatcher configuration. @throws ConfigError listing every problem. */
export function loadDispatcherConfig(env: Record<string, string | undefined>): Readonly<DispatcherConfig> {
  return loadConfig(DispatcherConfigSchema, env);
}
