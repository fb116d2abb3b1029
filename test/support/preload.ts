/**
 * Runs once before the test files (bunfig.toml): starts one private
 * redis-server for the whole run on a free port and stops it at exit. Tests
 * never touch a Redis on 6379; each isolates itself with a key prefix.
 */
import { afterAll } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startPrivateRedis } from "../../scripts/private-redis.ts";

const dir = mkdtempSync(join(tmpdir(), "tds-test-redis-"));
const redis = await startPrivateRedis(dir);
process.env.TEST_REDIS_URL = redis.url;

// A global hook (preload files define them for the whole run); the exit handler is a second net.
afterAll(async () => {
  await redis.stop();
  rmSync(dir, { recursive: true, force: true });
});
process.on("exit", () => {
  try {
    process.kill(redis.pid, "SIGKILL");
  } catch {
    // already gone
  }
  rmSync(dir, { recursive: true, force: true });
});
