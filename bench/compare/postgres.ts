/**
 * A private PostgreSQL cluster for the peers: Debian's binaries, run as the
 * `postgres` user, data under `bench/.work/`, on a free loopback port, pinned to
 * the server core. Every setting that differs from PostgreSQL's defaults is in
 * `POSTGRES_SETTINGS` (memory sized for this 24 GiB machine).
 */
import { chownSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { SQL } from "bun";
import { freePort } from "../../scripts/private-redis.ts";
import { PG_BIN } from "./install.ts";

/**
 * `synchronous_commit = off` matches our store's durability (SQLite WAL with
 * `synchronous = NORMAL`: a commit does not wait for its flush); fsync stays on.
 */
export const POSTGRES_SETTINGS = {
  shared_buffers: "512MB",
  effective_cache_size: "4GB",
  work_mem: "16MB",
  synchronous_commit: "off",
  max_connections: "100",
};

export interface PrivatePostgres {
  url(database: string): string;
  /** A client for loading; closed by the caller. */
  client(database: string): SQL;
  createDatabase(name: string): Promise<void>;
  /** The postmaster and its children. */
  pids(): number[];
  stop(): Promise<void>;
}

const asPostgres = (command: string[]) => ["runuser", "-u", "postgres", "--", ...command];

function run(command: string[], what: string): void {
  const proc = Bun.spawnSync(command, { stdout: "pipe", stderr: "pipe" });
  if (proc.exitCode !== 0) throw new Error(`${what} failed: ${proc.stderr.toString().slice(0, 2000)}`);
}

function uidOf(user: string): { uid: number; gid: number } {
  const line = readFileSync("/etc/passwd", "utf8")
    .split("\n")
    .find((l) => l.startsWith(`${user}:`));
  const [, , uid, gid] = line?.split(":") ?? [];
  if (uid === undefined || gid === undefined)
    throw new Error(`no '${user}' user (apt-get install postgresql)`);
  return { uid: Number(uid), gid: Number(gid) };
}

/** initdb in `dir` (emptied first), then starts the server pinned to `core`. */
export async function startPrivatePostgres(dir: string, core: number): Promise<PrivatePostgres> {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const { uid, gid } = uidOf("postgres");
  chownSync(dir, uid, gid);
  const data = join(dir, "data");
  run(
    asPostgres([join(PG_BIN, "initdb"), "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8"]),
    "initdb",
  );
  const port = freePort();
  const settings = Object.entries({
    ...POSTGRES_SETTINGS,
    port: String(port),
    listen_addresses: "127.0.0.1",
    unix_socket_directories: dir,
  }).map(([name, value]) => `-c ${name}=${value}`);
  const pgCtl = (...args: string[]) => asPostgres([join(PG_BIN, "pg_ctl"), "-D", data, ...args]);
  run(
    [
      "taskset",
      "-c",
      String(core),
      ...pgCtl("-l", join(dir, "server.log"), "-w", "-o", settings.join(" "), "start"),
    ],
    "pg_ctl start",
  );
  const url = (database: string) => `postgres://postgres@127.0.0.1:${port}/${database}`;
  return {
    url,
    client: (database) => new SQL({ url: url(database), max: 4 }),
    async createDatabase(name) {
      const admin = new SQL({ url: url("postgres"), max: 1 });
      await admin.unsafe(`CREATE DATABASE ${name}`);
      await admin.close();
    },
    pids: () => postgresPids(data),
    async stop() {
      if (existsSync(join(data, "postmaster.pid"))) run(pgCtl("-m", "fast", "-w", "stop"), "pg_ctl stop");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function postgresPids(data: string): number[] {
  const pidFile = join(data, "postmaster.pid");
  if (!existsSync(pidFile)) return [];
  const postmaster = Number(readFileSync(pidFile, "utf8").split("\n")[0]);
  const children = readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        // /proc/<pid>/stat: "pid (comm) state ppid …"; comm may hold spaces, so split after ")".
        const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
        return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === postmaster;
      } catch {
        return false;
      }
    })
    .map(Number);
  return [postmaster, ...children];
}

/** Inserts `rows` (objects keyed by column) into `table` in multi-row INSERTs of at most 65,535 parameters. */
export async function bulkInsert(sql: SQL, table: string, rows: Record<string, unknown>[]): Promise<void> {
  const columns = Object.keys(rows[0] ?? {}).length || 1;
  const chunk = Math.floor(60_000 / columns);
  for (let from = 0; from < rows.length; from += chunk) {
    await sql`INSERT INTO ${sql(table)} ${sql(rows.slice(from, from + chunk))}`;
  }
}
