/** Shared pieces of the benchmarks: a real API over loopback on a private Redis, percentiles, the machine. */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { provisionTenant } from "../api/admin/provision-tenant.ts";
import { serviceClient } from "../api/admin/webhook-tool.ts";
import { loadApiConfig } from "../api/config.ts";
import { createApiRuntime } from "../api/runtime.ts";
import { openCoreServices } from "../api/services.ts";
import { createLogger } from "../common/log.ts";
import { connectRedis } from "../common/redis.ts";
import { freePort, startPrivateRedis } from "../scripts/private-redis.ts";

/**
 * Rate limits set out of reach, not off: one token drives each benchmark as fast as the service
 * goes (over the default per-token rate), and every request still pays the limiter's Redis call.
 */
export const RATE_LIMITS_OUT_OF_REACH = {
  RATE_LIMIT_TOKEN_PER_SECOND: "1000000000",
  RATE_LIMIT_TENANT_PER_SECOND: "1000000000",
};

export async function startBenchApi() {
  const dataDir = mkdtempSync(join(tmpdir(), "tds-bench-"));
  const redisServer = await startPrivateRedis(join(dataDir, "redis"));
  const config = loadApiConfig({
    DATA_DIR: dataDir,
    REDIS_URL: redisServer.url,
    LOG_LEVEL: "error",
    PORT: "0",
    ...RATE_LIMITS_OUT_OF_REACH,
  });
  const services = await openCoreServices(config);
  const redis = connectRedis(config.REDIS_URL, () => undefined);
  const app = createApiRuntime(config, services, redis, createLogger("error")).app.listen({
    port: 0,
    hostname: "127.0.0.1",
  });
  const base = `http://127.0.0.1:${app.server?.port}`;
  const { token } = await provisionTenant(services, { tenantName: "bench" });
  const call = serviceClient(base, token.token);
  return {
    base,
    call,
    services,
    async stop() {
      await app.stop(true);
      redis.disconnect();
      await services.store.close();
      await redisServer.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The p-th percentile (0–100) of `samples`, nearest rank. */
export function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return (
    sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN
  );
}

export function machine(): string {
  return `${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, ${Math.round(totalmem() / 2 ** 30)} GiB, Bun ${Bun.version}`;
}

export const ms = (value: number) => `${value.toFixed(2)} ms`;

/**
 * Writes a bench's results file, laid out as the repository's formatter keeps Markdown (tables
 * padded): the results are part of the tree, which the gate checks, and benches write tables
 * unpadded.
 */
export function writeResultsFile(file: string | URL, text: string): void {
  const path = file instanceof URL ? fileURLToPath(file) : file;
  writeFileSync(path, text);
  const biome = join(import.meta.dir, "../node_modules/.bin/biome");
  const formatted = Bun.spawnSync([biome, "format", "--write", path], { stdout: "ignore", stderr: "pipe" });
  if (formatted.exitCode !== 0)
    console.error(`biome could not format ${path}: ${formatted.stderr.toString()}`);
}

/** Where benchmarked processes write CPU profiles (BENCH_PROFILE_DIR); benches record nothing when set. */
export const PROFILE_DIR = process.env.BENCH_PROFILE_DIR;

/** Bun's arguments to run `script`: under the sampling profiler (a Markdown profile `name`.md) when PROFILE_DIR is set. */
export function bunArgs(script: string, name: string): string[] {
  return PROFILE_DIR
    ? ["--cpu-prof-md", `--cpu-prof-dir=${PROFILE_DIR}`, `--cpu-prof-name=${name}.md`, script]
    : [script];
}

/**
 * The real API as its own process (pinned to `core`), on a fresh data directory and a private Redis.
 * `extraEnv` adds to (and overrides) its environment; `cwd` is the checkout whose `api/main.ts` runs
 * (this one by default; another revision's work tree for bench/against-revision.ts). Returns its URL
 * and the administrator token it printed on first start.
 */
export async function startApiProcess(core = 0, extraEnv: Record<string, string> = {}, cwd?: string) {
  const dataDir = mkdtempSync(join(tmpdir(), "tds-bench-"));
  const redisServer = await startPrivateRedis(join(dataDir, "redis"));
  const port = freePort();
  const env = {
    ...process.env,
    DATA_DIR: dataDir,
    REDIS_URL: redisServer.url,
    PORT: String(port),
    LOG_LEVEL: "error",
    ...RATE_LIMITS_OUT_OF_REACH,
    ...extraEnv,
  };
  const proc = Bun.spawn(
    ["taskset", "-c", String(core), process.execPath, ...bunArgs("api/main.ts", `api-${port}`)],
    {
      env,
      cwd,
      stdout: "pipe",
      stderr: "inherit",
    },
  );
  const reader = proc.stdout.getReader();
  let output = "";
  while (!output.includes("API listening")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the API exited: ${output}`);
    output += new TextDecoder().decode(value);
  }
  const token = /tenant 'default'.*\n(\S+)/.exec(output)?.[1] ?? "";
  const base = `http://127.0.0.1:${port}`;
  const call = serviceClient(base, token);
  return {
    base,
    token,
    dataDir,
    pid: proc.pid,
    call,
    async stop() {
      proc.kill("SIGTERM");
      await proc.exited;
      await redisServer.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Starts the bare Bun.serve baseline pinned to `core`. */
export async function startBareServer(core = 0) {
  const port = freePort();
  const proc = Bun.spawn(
    ["taskset", "-c", String(core), process.execPath, "bench/bare-server.ts", String(port)],
    { stdout: "pipe" },
  );
  await proc.stdout.getReader().read();
  return {
    url: `http://127.0.0.1:${port}/`,
    stop: async () => {
      proc.kill();
      await proc.exited;
    },
  };
}

/** Resident memory of a process, in MiB (Linux /proc). */
export function residentMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}
