/**
 * Runs once before the test files (bunfig.toml): starts one private
 * redis-server for the whole run on a free port and stops it at exit. Tests
 * never touch a Redis on 6379; each isolates itself with a key prefix. The
 * private PostgreSQL (private-postgres.ts) starts only when a test asks for a
 * database; its stop is here too, so it ends with the run.
 */
import { afterAll } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startPrivateRedis } from "../../scripts/private-redis.ts";
import { killTestPostgres, stopTestPostgres } from "./private-postgres.ts";
import { removeAllTempDirs } from "./temp-dirs.ts";

const dir = mkdtempSync(join(tmpdir(), "tds-test-redis-"));
const redis = await startPrivateRedis(dir);
process.env.TEST_REDIS_URL = redis.url;

// A global hook (preload files define them for the whole run); the exit handler is a second net.
afterAll(async () => {
  await redis.stop();
  rmSync(dir, { recursive: true, force: true });
  await stopTestPostgres();
  removeAllTempDirs();
});
// A run ended by a signal (Ctrl-C, a CI timeout) runs neither: exit as the signal would, through
// the exit handler. The PostgreSQL server is no child of ours (pg_ctl detaches it), so nothing
// else would end it.
for (const [signal, code] of [
  ["SIGINT", 130],
  ["SIGTERM", 143],
  ["SIGHUP", 129],
] as const)
  process.once(signal, () => process.exit(code));
process.on("exit", () => {
  killTestPostgres();
  try {
    process.kill(redis.pid, "SIGKILL");
  } catch {
    // already gone
  }
  rmSync(dir, { recursive: true, force: true });
  removeAllTempDirs();
});
