/**
 * The local cluster: options in, running processes out — a private
 * PostgreSQL (unless DATABASE_URL is given) and Redis (unless REDIS_URL is),
 * N API processes and M dispatchers sharing them, and the round-robin
 * balancer in front. Everything temporary lives in one folder under the
 * system's temp directory, removed by `stop()`; nothing is written into the
 * checkout.
 */
import { randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError } from "../common/errors.ts";
import { type Balancer, startBalancer } from "./balancer.ts";
import type { ClusterOptions } from "./cluster-options.ts";
import { type ClusterProcess, clusterProcess } from "./cluster-process.ts";
import { type PrivatePostgres, startPrivatePostgres } from "./private-postgres.ts";
import { freePort, type PrivateRedis, startPrivateRedis } from "./private-redis.ts";

/** The database the private PostgreSQL holds the store in. */
const DATABASE = "tds";

/** Connections each process's pool may open (the engine's default pool is 10), with room for tools. */
const CONNECTIONS_PER_PROCESS = 16;

/**
 * The private cluster's settings besides the defaults: a commit does not wait for its flush (the
 * embedded engine's durability, as the benchmarks run it; its data is thrown away at stop anyway),
 * and room for every process's pool.
 */
function postgresSettings(processes: number): Record<string, string> {
  return {
    synchronous_commit: "off",
    max_connections: String(Math.max(100, CONNECTIONS_PER_PROCESS * processes + 20)),
  };
}

export interface LocalCluster {
  balancer: Balancer;
  apis: ClusterProcess[];
  dispatchers: ClusterProcess[];
  /** The store every process uses, and whether this cluster started its server. */
  database: { url: string; private: boolean };
  redis: { url: string; private: boolean };
  /** The administrator token API 1 printed on an empty store; null when the store had tenants already. */
  token: string | null;
  /** What API 1 printed when the store was not empty (how to mint a token). */
  tokenHint: string;
  /** Whether JWT_SECRET and SECRETS_KEY were generated for this run (tokens and secrets die with it). */
  generatedSecrets: boolean;
  /** The temporary folder (removed by `stop`). */
  dir: string;
  /** Stops the balancer, every process, then Redis and PostgreSQL if private; removes `dir`. */
  stop(): Promise<void>;
}

/** The balancer on `host:port`. @throws ConfigError when the port is taken. */
function listenBalancer(backends: string[], host: string, port: number): Balancer {
  try {
    return startBalancer({ backends, hostname: host, port });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EADDRINUSE") throw error;
    throw new ConfigError([
      `--port: ${host}:${port} is already in use; choose another --port (0: a free one)`,
    ]);
  }
}

/**
 * Starts the cluster; on a failure, stops what it started and throws. Every process gets this
 * process's environment, then `env` (settings for all of them, as a benchmark sets), then what the
 * cluster decides (store, Redis, secrets, ports).
 */
export async function startLocalCluster(
  options: Readonly<ClusterOptions>,
  print: (line: string) => void,
  env: Readonly<Record<string, string>> = {},
): Promise<LocalCluster> {
  const dir = mkdtempSync(join(tmpdir(), "tds-cluster-"));
  // Traversable, not listable: as root, PostgreSQL runs as its own user and must reach its folder in
  // here; the other folders stay private to us.
  chmodSync(dir, 0o711);
  const dataDir = join(dir, "data");
  mkdirSync(dataDir, { mode: 0o700 });
  mkdirSync(join(dir, "redis"), { mode: 0o700 });
  let postgres: PrivatePostgres | null = null;
  let redis: PrivateRedis | null = null;
  let balancer: Balancer | null = null;
  const processes: ClusterProcess[] = [];
  const stop = async () => {
    await balancer?.stop();
    // Dispatchers first: they hand their jobs back to the queue while the APIs still run.
    await Promise.all(processes.filter((p) => p.spec.name.startsWith("dispatcher")).map((p) => p.stop()));
    await Promise.all(processes.map((p) => p.stop()));
    await redis?.stop();
    // Its data goes with the folder: an immediate shutdown skips the checkpoint a fast one writes
    // (tens of seconds after a load on a busy disk).
    postgres?.killNow();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    let databaseUrl = options.DATABASE_URL;
    if (!databaseUrl) {
      postgres = await startPrivatePostgres({
        dir: join(dir, "postgres"),
        settings: postgresSettings(options["--api"] + options["--dispatchers"]),
      });
      await postgres.createDatabase(DATABASE);
      databaseUrl = postgres.url(DATABASE);
    }
    // Stopped by us after every process using it (a Ctrl-C signals the APIs and dispatchers too).
    if (!options.REDIS_URL)
      redis = await startPrivateRedis(join(dir, "redis"), undefined, { ownSession: true });
    const redisUrl = options.REDIS_URL ?? (redis?.url as string);
    const secret = () => randomBytes(32).toString("base64url");
    const shared = {
      ...process.env,
      ...env,
      DATA_DIR: dataDir,
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl,
      // Given to every process, never generated by each: they must all hold the same ones.
      JWT_SECRET: options.JWT_SECRET ?? secret(),
      SECRETS_KEY: options.SECRETS_KEY ?? secret(),
    };
    const host = options.HOST;
    const api = (n: number) => {
      const port = freePort();
      return clusterProcess({
        name: `api ${n}`,
        entry: "api/main.ts",
        env: { ...shared, HOST: host, PORT: String(port) },
        ready: "API listening on",
        url: `http://${host}:${port}`,
        print,
      });
    };
    const dispatcher = (n: number) => {
      const port = freePort();
      return clusterProcess({
        name: `dispatcher ${n}`,
        entry: "dispatcher/main.ts",
        env: { ...shared, DISPATCHER_HOST: host, DISPATCHER_PORT: String(port) },
        ready: "Dispatcher consuming deliveries",
        url: `http://${host}:${port}`,
        print,
      });
    };
    // API 1 alone first: it migrates an empty store and provisions the default tenant, which two
    // processes starting at once would race to do.
    const first = api(1);
    processes.push(first);
    const startup = await first.start();
    const apis = [first, ...Array.from({ length: options["--api"] - 1 }, (_, i) => api(i + 2))];
    const dispatchers = Array.from({ length: options["--dispatchers"] }, (_, i) => dispatcher(i + 1));
    processes.push(...apis.slice(1), ...dispatchers);
    await Promise.all(processes.slice(1).map((p) => p.start()));
    balancer = listenBalancer(
      apis.map((p) => p.spec.url),
      host,
      options["--port"],
    );
    return {
      balancer,
      apis,
      dispatchers,
      database: { url: databaseUrl, private: postgres !== null },
      redis: { url: redisUrl, private: redis !== null },
      token: /tenant 'default'.*\n(\S+)/.exec(startup)?.[1] ?? null,
      tokenHint: startup.split("\n").find((line) => line.includes("mint-token")) ?? "",
      generatedSecrets: !options.JWT_SECRET || !options.SECRETS_KEY,
      dir,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
