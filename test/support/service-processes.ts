/**
 * The whole service as real processes, for end-to-end and fault tests: a
 * private redis-server (AOF on) in a fresh data directory, a fresh store of
 * the run's engine (TEST_STORE; on PostgreSQL an empty database, which the
 * processes migrate as they start, as on a first deployment), the API
 * (`bun api/main.ts`) and the dispatcher (`bun dispatcher/main.ts`), each of
 * which a test can kill (SIGKILL, as a crash would), stop and start again on
 * the same port and data. `stop()` ends everything this harness started; an
 * exit handler is the second net, so no process outlives the test run.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, type PrivateRedis, startPrivateRedis } from "../../scripts/private-redis.ts";
import { collect, isRunning } from "./processes.ts";
import { freshTestStore, type StoreEnv, type TestEngine } from "./test-store.ts";

const ROOT = join(import.meta.dir, "../..");

/** What the dispatcher needs to deliver to loopback receivers quickly in tests. */
const LOOPBACK_DISPATCHER_ENV = {
  DELIVERY_ALLOW_HTTP: "true",
  DELIVERY_ALLOW_PRIVATE_NETWORKS: "127.0.0.0/8,::1",
};

export interface ServiceOptions {
  /** Added to (and overriding) the API's environment. */
  apiEnv?: Record<string, string>;
  /** Added to (and overriding) the dispatcher's environment. */
  dispatcherEnv?: Record<string, string>;
  /** Log level of both processes (their stderr is kept for failure reports). Default `warn`. */
  logLevel?: string;
  /** Extra `bun` flags per process, e.g. `--cpu-prof` for a profile written on a clean stop. */
  bunFlags?: { api?: string[]; dispatcher?: string[] };
  /** The store engine; default the run's (TEST_STORE). */
  engine?: TestEngine;
}

/** One of the service's processes, restartable on the same environment. */
export interface ServiceProcess {
  readonly name: string;
  /** Pid of the current incarnation (0 when none runs). */
  pid(): number;
  running(): boolean;
  /** Starts it (again) and waits until it says it is ready. */
  start(): Promise<void>;
  /** SIGKILL, then waits for the exit. */
  kill(): Promise<void>;
  /** SIGTERM (a clean shutdown), then waits for the exit. */
  stop(): Promise<void>;
  /** Everything every incarnation wrote to stdout and stderr. */
  output(): string;
}

export interface RunningService {
  base: string;
  /** The dispatcher's operations listener (`/metrics`, `/healthz`, `/readyz`), on a port of its own. */
  dispatcherBase: string;
  /** The administrator token of tenant `default`, printed on the API's first start. */
  token: string;
  dataDir: string;
  /** The settings that locate the service's store (DATA_DIR, and DATABASE_URL on PostgreSQL). */
  storeEnv: StoreEnv;
  api: ServiceProcess;
  dispatcher: ServiceProcess;
  /** The private Redis: `stop()` (SIGTERM, AOF flushed) or `kill()`, then `start()` on the same port and files. */
  redis: {
    url: string;
    port: number;
    pid(): number;
    start(): Promise<void>;
    stop(): Promise<void>;
    kill(): Promise<void>;
  };
  /**
   * Starts one more API process on the same store and Redis (its own port, the environment of the
   * first plus `env`), as a second replica behind a balancer would run; `stop()` ends it too.
   */
  startApi(env?: Record<string, string>): Promise<{ base: string; api: ServiceProcess }>;
  /**
   * Starts one more dispatcher on the same store and Redis (its own operations port, the environment
   * of the first plus `env`); `stop()` ends it too.
   */
  startDispatcher(env?: Record<string, string>): Promise<{ base: string; dispatcher: ServiceProcess }>;
  /** Runs the admin tool (`bun api/admin/cli.ts ...args`) on the service's store; returns its output. */
  admin(args: string[]): Promise<string>;
  /** Stops everything this harness started and removes the data directory. Safe to call twice. */
  stop(): Promise<void>;
}

const started = new Set<Bun.Subprocess>();
const redisPids = new Set<number>();
process.on("exit", () => {
  for (const proc of started) if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL");
  for (const pid of redisPids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
});

function serviceProcess(
  name: string,
  entry: string[],
  env: Record<string, string | undefined>,
  ready: string,
  timeoutMs = 20_000,
): ServiceProcess {
  let proc: Bun.Subprocess<"ignore", "pipe", "pipe"> | null = null;
  const outputs: { text: () => string }[] = [];
  const alive = () => proc !== null && proc.exitCode === null && proc.signalCode === null;
  const end = async (signal: "SIGKILL" | "SIGTERM") => {
    const current = proc;
    if (!current) return;
    if (alive()) current.kill(signal);
    await current.exited;
    started.delete(current);
    proc = null;
  };
  return {
    name,
    pid: () => (alive() ? (proc?.pid ?? 0) : 0),
    running: () => alive() && isRunning(proc?.pid ?? 0),
    output: () => outputs.map((o) => o.text()).join(""),
    async start() {
      if (alive()) throw new Error(`${name} is already running`);
      const child = Bun.spawn([process.execPath, ...entry], {
        cwd: ROOT,
        env,
        stdin: "ignore",
        stdout: "pipe",
        stderr: "pipe",
      });
      proc = child;
      started.add(child);
      const out = collect(child.stdout);
      const err = collect(child.stderr);
      outputs.push({ text: () => out.text() + err.text() });
      const deadline = Date.now() + timeoutMs;
      while (!out.text().includes(ready)) {
        if (child.exitCode !== null || child.signalCode !== null)
          throw new Error(`${name} exited before it was ready:\n${out.text()}${err.text()}`);
        if (Date.now() > deadline) {
          child.kill("SIGKILL");
          throw new Error(`${name} not ready within ${timeoutMs} ms:\n${out.text()}${err.text()}`);
        }
        await Bun.sleep(10);
      }
    },
    kill: () => end("SIGKILL"),
    stop: () => end("SIGTERM"),
  };
}

/** Starts Redis, the API and the dispatcher; returns once both processes say they are ready. */
export async function startService(options: ServiceOptions = {}): Promise<RunningService> {
  const dataDir = mkdtempSync(join(tmpdir(), "tds-flow-"));
  const store = await freshTestStore(dataDir, "service", false, options.engine);
  const redisDir = join(dataDir, "redis");
  let redis: PrivateRedis | null = await startPrivateRedis(redisDir);
  redisPids.add(redis.pid);
  const { port: redisPort, url: redisUrl } = redis;
  const port = freePort();
  const dispatcherPort = freePort();
  const shared = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    ...store.env,
    REDIS_URL: redisUrl,
    // Given, not generated: two processes starting at once must not race to create it.
    SECRETS_KEY: "flow-secrets-key-flow-secrets-key-0123456789",
    LOG_LEVEL: options.logLevel ?? "warn",
  };
  const apiEnv = {
    ...shared,
    PORT: String(port),
    JWT_SECRET: "flow-jwt-secret-flow-jwt-secret-0123456789",
    WEBHOOKS_ALLOW_HTTP: "true",
    ...options.apiEnv,
  };
  const api = serviceProcess(
    "api",
    [...(options.bunFlags?.api ?? []), "api/main.ts"],
    apiEnv,
    "API listening on",
  );
  const dispatcherEnv = { ...shared, ...LOOPBACK_DISPATCHER_ENV, ...options.dispatcherEnv };
  const dispatcherProcess = (name: string, port: number, env: Record<string, string> = {}) =>
    serviceProcess(
      name,
      [...(options.bunFlags?.dispatcher ?? []), "dispatcher/main.ts"],
      { ...dispatcherEnv, ...env, DISPATCHER_PORT: String(port) },
      "Dispatcher consuming deliveries",
    );
  const dispatcher = dispatcherProcess("dispatcher", dispatcherPort);
  const replicas: ServiceProcess[] = [];
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    // Killed, not stopped: a test that failed half-way must not wait on grace periods.
    await Promise.all([api.kill(), dispatcher.kill(), ...replicas.map((replica) => replica.kill())]);
    if (redis) {
      redisPids.delete(redis.pid);
      await redis.kill();
      redis = null;
    }
    rmSync(dataDir, { recursive: true, force: true });
    await store.drop();
  };
  try {
    await api.start();
    await dispatcher.start();
  } catch (error) {
    await stop();
    throw error;
  }
  const token = /tenant 'default'.*\n(\S+)/.exec(api.output())?.[1];
  if (!token) {
    await stop();
    throw new Error(`the API printed no administrator token:\n${api.output()}`);
  }
  const redisControl = async (how: "stop" | "kill") => {
    if (!redis) return;
    redisPids.delete(redis.pid);
    await redis[how]();
    redis = null;
  };
  return {
    base: `http://127.0.0.1:${port}`,
    dispatcherBase: `http://127.0.0.1:${dispatcherPort}`,
    token,
    dataDir,
    storeEnv: store.env,
    api,
    dispatcher,
    redis: {
      url: redisUrl,
      port: redisPort,
      pid: () => redis?.pid ?? 0,
      async start() {
        if (redis) throw new Error("redis is already running");
        redis = await startPrivateRedis(redisDir, redisPort);
        if (redis.port !== redisPort) throw new Error(`redis came back on ${redis.port}, not ${redisPort}`);
        redisPids.add(redis.pid);
      },
      stop: () => redisControl("stop"),
      kill: () => redisControl("kill"),
    },
    async startApi(env = {}) {
      const replicaPort = freePort();
      const replica = serviceProcess(
        `api ${replicas.filter((r) => r.name.startsWith("api")).length + 2}`,
        [...(options.bunFlags?.api ?? []), "api/main.ts"],
        { ...apiEnv, ...env, PORT: String(replicaPort) },
        "API listening on",
      );
      replicas.push(replica);
      await replica.start();
      return { base: `http://127.0.0.1:${replicaPort}`, api: replica };
    },
    async startDispatcher(env = {}) {
      const replicaPort = freePort();
      const number = replicas.filter((r) => r.name.startsWith("dispatcher")).length + 2;
      const replica = dispatcherProcess(`dispatcher ${number}`, replicaPort, env);
      replicas.push(replica);
      await replica.start();
      return { base: `http://127.0.0.1:${replicaPort}`, dispatcher: replica };
    },
    async admin(args) {
      const proc = Bun.spawn([process.execPath, "api/admin/cli.ts", ...args], {
        cwd: ROOT,
        env: apiEnv,
        stdout: "pipe",
        stderr: "pipe",
      });
      const [out, err, code] = await Promise.all([
        new Response(proc.stdout).text(),
        new Response(proc.stderr).text(),
        proc.exited,
      ]);
      if (code !== 0) throw new Error(`admin ${args.join(" ")} exited ${code}: ${err}`);
      return out;
    },
    stop,
  };
}
