/**
 * The start command: a private Redis (unless REDIS_URL is set), then the API
 * and the dispatcher as two processes sharing the environment. Ctrl-C or
 * SIGTERM stops all three; if one of the services dies, the rest are stopped
 * too, so nothing is left running half-way.
 */
import { resolve } from "node:path";
import { type Subprocess, spawn } from "bun";
import { z } from "zod";
import { redisUrl, sharedConfigFields } from "../common/config-fields.ts";
import { ConfigError } from "../common/errors.ts";
import { emptyAsUndefined, loadConfig } from "../common/load-config.ts";
import { type PrivateRedis, startPrivateRedis } from "./private-redis.ts";

const LauncherConfigSchema = z.object({
  DATA_DIR: sharedConfigFields.DATA_DIR,
  /** When unset, a private Redis is started under DATA_DIR/redis. */
  REDIS_URL: z.preprocess(emptyAsUndefined, redisUrl.optional()),
});

async function main(): Promise<void> {
  const config = loadConfig(LauncherConfigSchema, process.env);
  const dataDir = resolve(config.DATA_DIR);
  let redis: PrivateRedis | null = null;
  if (!config.REDIS_URL) {
    // In a session of its own: a Ctrl-C reaches the services, and Redis is stopped after them.
    redis = await startPrivateRedis(resolve(dataDir, "redis"), undefined, { ownSession: true });
    console.log(`Private Redis on ${redis.url} (files in ${resolve(dataDir, "redis")})`);
  }
  const env = { ...process.env, DATA_DIR: dataDir, REDIS_URL: config.REDIS_URL ?? redis?.url };
  const children: Subprocess[] = [];
  let stopping = false;

  const stopAll = async (exitCode: number) => {
    if (stopping) return;
    stopping = true;
    for (const child of children) if (child.exitCode === null) child.kill("SIGTERM");
    await Promise.all(children.map((child) => child.exited));
    await redis?.stop();
    process.exit(exitCode);
  };

  for (const entry of ["api/main.ts", "dispatcher/main.ts"]) {
    const child = spawn([process.execPath, entry], { env, stdio: ["ignore", "inherit", "inherit"] });
    children.push(child);
    child.exited.then((code) => {
      if (!stopping) {
        console.error(`${entry} exited (code ${code}); stopping everything`);
        void stopAll(code === 0 ? 1 : code);
      }
    });
  }
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, () => void stopAll(0));
}

main().catch((error) => {
  console.error(error instanceof ConfigError ? `start: ${error.message}` : error);
  process.exit(1);
});
