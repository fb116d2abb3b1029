/**
 * Starts a private PostgreSQL cluster: Debian's binaries, `initdb` into a
 * directory of ours, the server on a free loopback port with its socket in
 * that directory. PostgreSQL refuses to run as root, so as root the binaries
 * run as the `postgres` user (`runuser`); as anyone else, as that user. Used
 * by the test harness (test/support/private-postgres.ts) and the benchmarks;
 * the service itself only ever takes a database URL.
 */
import { chownSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { SQL } from "bun";
import { freePort } from "./private-redis.ts";

/** Where Debian puts a major version's binaries (`/usr/lib/postgresql/<major>/bin`). */
const DEBIAN_ROOT = "/usr/lib/postgresql";

/** The newest installed PostgreSQL's binaries (`PG_BIN` overrides), or null when none is installed. */
export function postgresBin(): string | null {
  if (process.env.PG_BIN) return process.env.PG_BIN;
  const majors = existsSync(DEBIAN_ROOT)
    ? readdirSync(DEBIAN_ROOT).filter((major) => existsSync(join(DEBIAN_ROOT, major, "bin", "initdb")))
    : [];
  const newest = majors.sort((a, b) => Number(b) - Number(a))[0];
  return newest === undefined ? null : join(DEBIAN_ROOT, newest, "bin");
}

export interface PostgresOptions {
  /** Holds the cluster (`data/`), the socket and the server log; emptied first, removed by `stop`. */
  dir: string;
  /** Server settings (`-c name=value`) besides port, address and socket directory. */
  settings?: Readonly<Record<string, string>>;
  /** initdb's `--locale`; the environment's when absent. */
  locale?: string;
  /** Pins the server to this CPU core (`taskset`). */
  core?: number;
}

export interface PrivatePostgres {
  port: number;
  /** The URL of `database` as the superuser `postgres` (trust authentication, loopback only). */
  url(database: string): string;
  /** `CREATE DATABASE` (from template0, UTF-8). */
  createDatabase(name: string): Promise<void>;
  /** The postmaster and its children. */
  pids(): number[];
  /** Stops the server (fast shutdown), waits for it, removes `dir`. */
  stop(): Promise<void>;
  /**
   * Stops the server at once (immediate shutdown, as a crash would) and removes `dir`, without
   * awaiting anything: for exit handlers, which may not wait for promises.
   */
  killNow(): void;
}

function run(command: string[], what: string): void {
  const proc = Bun.spawnSync(command, { stdout: "pipe", stderr: "pipe" });
  if (proc.exitCode !== 0) {
    const how = proc.signalCode ? `killed by ${proc.signalCode}` : `exit ${proc.exitCode}`;
    const said = `${proc.stderr.toString()}${proc.stdout.toString()}`.trim().slice(-2000);
    throw new Error(`${what} failed (${how}): ${said}`);
  }
}

function userIds(user: string): { uid: number; gid: number } {
  const line = readFileSync("/etc/passwd", "utf8")
    .split("\n")
    .find((entry) => entry.startsWith(`${user}:`));
  const [, , uid, gid] = line?.split(":") ?? [];
  if (uid === undefined || gid === undefined)
    throw new Error(`no '${user}' user (install PostgreSQL: apt-get install postgresql)`);
  return { uid: Number(uid), gid: Number(gid) };
}

/** initdb in `options.dir` (emptied first), then starts the server; retries on another port if one is taken meanwhile. */
export async function startPrivatePostgres(options: PostgresOptions): Promise<PrivatePostgres> {
  const bin = postgresBin();
  if (!bin) throw new Error("PostgreSQL is not installed (apt-get install postgresql, or set PG_BIN)");
  rmSync(options.dir, { recursive: true, force: true });
  mkdirSync(options.dir, { recursive: true });
  try {
    return startIn(bin, options);
  } catch (error) {
    rmSync(options.dir, { recursive: true, force: true });
    throw error;
  }
}

function startIn(bin: string, options: PostgresOptions): PrivatePostgres {
  const { dir } = options;
  const asRoot = process.getuid?.() === 0;
  // As root, the server's own user must own its files; otherwise they are ours already.
  if (asRoot) {
    const { uid, gid } = userIds("postgres");
    chownSync(dir, uid, gid);
  }
  const as = (command: string[]) => (asRoot ? ["runuser", "-u", "postgres", "--", ...command] : command);
  const data = join(dir, "data");
  const locale = options.locale ? [`--locale=${options.locale}`] : [];
  run(
    as([join(bin, "initdb"), "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", ...locale]),
    "initdb",
  );
  const pgCtl = (...args: string[]) => as([join(bin, "pg_ctl"), "-D", data, ...args]);
  const pin = options.core === undefined ? [] : ["taskset", "-c", String(options.core)];
  let port = freePort();
  for (let attempt = 0; ; attempt++) {
    const settings = Object.entries({
      ...options.settings,
      port: String(port),
      listen_addresses: "127.0.0.1",
      unix_socket_directories: dir,
    }).map(([name, value]) => `-c ${name}=${value}`);
    const proc = Bun.spawnSync(
      [...pin, ...pgCtl("-l", join(dir, "server.log"), "-w", "-o", settings.join(" "), "start")],
      { stdout: "pipe", stderr: "pipe" },
    );
    if (proc.exitCode === 0) break;
    if (attempt === 4) {
      const log = existsSync(join(dir, "server.log")) ? readFileSync(join(dir, "server.log"), "utf8") : "";
      throw new Error(`pg_ctl start failed: ${proc.stderr.toString()}${log}`.slice(0, 2000));
    }
    port = freePort();
  }

  const url = (database: string) => `postgres://postgres@127.0.0.1:${port}/${database}`;
  const postmaster = () => postmasterPid(data);
  return {
    port,
    url,
    async createDatabase(name) {
      const admin = new SQL({ url: url("postgres"), max: 1 });
      try {
        await admin.unsafe(`CREATE DATABASE "${name}" TEMPLATE template0 ENCODING 'UTF8'`);
      } finally {
        await admin.close();
      }
    },
    pids: () => {
      const pid = postmaster();
      return pid === null ? [] : [pid, ...childrenOf(pid)];
    },
    async stop() {
      if (postmaster() !== null) run(pgCtl("-m", "fast", "-w", "stop"), "pg_ctl stop");
      rmSync(dir, { recursive: true, force: true });
    },
    killNow() {
      const pid = postmaster();
      if (pid !== null) {
        // SIGQUIT is PostgreSQL's immediate shutdown: the postmaster ends its children, then itself.
        try {
          process.kill(pid, "SIGQUIT");
        } catch {
          // already gone
        }
        const deadline = Date.now() + 5000;
        while (isRunning(pid) && Date.now() < deadline) Bun.sleepSync(10);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The running postmaster's pid (first line of `postmaster.pid`), or null. */
function postmasterPid(data: string): number | null {
  const pidFile = join(data, "postmaster.pid");
  if (!existsSync(pidFile)) return null;
  const pid = Number(readFileSync(pidFile, "utf8").split("\n")[0]);
  return Number.isInteger(pid) && isRunning(pid) ? pid : null;
}

/**
 * Whether process `pid` runs: it exists and is not a zombie. A stopped postmaster is reparented
 * (pg_ctl daemonizes it) and stays a zombie until its new parent reaps it, which some init
 * processes do late.
 */
export function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

function childrenOf(parent: number): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        // /proc/<pid>/stat: "pid (comm) state ppid …"; comm may hold spaces, so split after ")".
        const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
        return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === parent;
      } catch {
        return false;
      }
    })
    .map(Number);
}
