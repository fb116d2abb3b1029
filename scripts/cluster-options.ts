/**
 * The cluster command's options: its arguments and environment in, one frozen
 * value out, every problem reported at once (ConfigError).
 */
import { parseArgs } from "node:util";
import { z } from "zod";
import { redisUrl, sharedConfigFields } from "../common/config-fields.ts";
import { ConfigError } from "../common/errors.ts";
import { emptyAsUndefined, loadConfig } from "../common/load-config.ts";

/** More processes than this on one machine measure the machine, not the service. */
const MAX_PROCESSES = 16;

const count = (defaultValue: number) =>
  z.preprocess(emptyAsUndefined, z.coerce.number().int().min(1).max(MAX_PROCESSES).default(defaultValue));

const ClusterOptionsSchema = z.object({
  /** API processes behind the balancer, each on a free port of its own. Default 3. */
  "--api": count(3),
  /** Dispatcher processes, each with its operations listener on a free port. Default 2. */
  "--dispatchers": count(2),
  /** The balancer's port (0: a free one). Default 3000, the API's own default, so clients need not change. */
  "--port": z.preprocess(emptyAsUndefined, z.coerce.number().int().min(0).max(65535).default(3000)),
  /** Interface every listener binds. Default 127.0.0.1. */
  HOST: z.preprocess(emptyAsUndefined, z.string().min(1).default("127.0.0.1")),
  /** A PostgreSQL server's database to use; unset: a private cluster is started (and removed at stop). */
  DATABASE_URL: sharedConfigFields.DATABASE_URL,
  /** A Redis to use; unset: a private redis-server is started (and removed at stop). */
  REDIS_URL: z.preprocess(emptyAsUndefined, redisUrl.optional()),
  /** Shared by every API process (tokens signed by one are checked by all); generated for the run when unset. */
  JWT_SECRET: z.preprocess(emptyAsUndefined, z.string().min(32, "must be at least 32 characters").optional()),
  /** Shared by every process (secrets one encrypts, all decrypt); generated for the run when unset. */
  SECRETS_KEY: sharedConfigFields.SECRETS_KEY,
});

export type ClusterOptions = z.infer<typeof ClusterOptionsSchema>;

/**
 * Reads `npm run cluster -- --api N --dispatchers M --port P` and the environment.
 * @throws ConfigError listing every problem (an unknown option among them).
 */
export function parseClusterOptions(
  argv: readonly string[],
  env: Record<string, string | undefined>,
): Readonly<ClusterOptions> {
  let values: Record<string, string | undefined>;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        api: { type: "string" },
        dispatchers: { type: "string" },
        port: { type: "string" },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    throw new ConfigError([`${(error as Error).message} (options: --api N, --dispatchers M, --port P)`]);
  }
  return loadConfig(ClusterOptionsSchema, {
    ...env,
    "--api": values.api,
    "--dispatchers": values.dispatchers,
    "--port": values.port,
  });
}
