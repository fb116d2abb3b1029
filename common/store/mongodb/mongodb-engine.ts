/**
 * The MongoDB engine opened (common/store/open-engine.ts picks it, once
 * STORE_EXPERIMENTAL=mongodb allows it): a driver client on the replica set
 * MONGODB_URL names, the server checked (reachable, a replica set, a
 * supported version) and the layout created (ensure-layout.ts), so any
 * process can be the first to open a fresh database. What keeps a process
 * from starting is a ConfigError of one line naming MONGODB_URL, never a
 * driver's stack trace.
 */
import { type Db, MongoClient, ReadConcern } from "mongodb";
import { ConfigError } from "../../errors.ts";
import { ensureLayout } from "./ensure-layout.ts";

/**
 * The oldest server version a process starts on: compound wildcard indexes (the custom fields'
 * index, layout.ts) exist from 7.0.
 */
export const OLDEST_SUPPORTED_VERSION = [7, 0] as const;

/** The database used when MONGODB_URL names none. */
const DEFAULT_DATABASE = "tds";

/** How long the first connection waits for a usable server, unless the URL says (serverSelectionTimeoutMS). */
const DEFAULT_SELECTION_TIMEOUT_MS = 10_000;

/** The MongoDB engine, opened: a client on a checked replica set, the layout in place. */
export interface MongoEngine {
  readonly engine: "mongodb";
  readonly url: string;
  /** The client the checks ran on; whoever builds on the engine closes it. */
  readonly client: MongoClient;
  /** The service's database. */
  readonly db: Db;
}

/** The URL without its password, for messages. */
export function shownUrl(url: string): string {
  return url.replace(/^(mongodb(?:\+srv)?:\/\/)([^@/]*)@/, (_, scheme: string, credentials: string) => {
    const user = credentials.split(":")[0] ?? "";
    return `${scheme}${user ? `${user}@` : ""}`;
  });
}

/** The database the URL names (its path), or DEFAULT_DATABASE. */
export function databaseOf(url: string): string {
  const path = /^mongodb(?:\+srv)?:\/\/[^/?]*\/([^?]*)/.exec(url)?.[1] ?? "";
  return decodeURIComponent(path) || DEFAULT_DATABASE;
}

/** The first line of a driver's error, with its server code when it has one. */
function reasonOf(error: unknown): string {
  const coded = error as { code?: unknown; codeName?: unknown; message?: unknown } | null;
  const message = String(coded?.message ?? error).split("\n")[0] ?? "";
  const code = typeof coded?.codeName === "string" ? coded.codeName : "";
  return code && !message.includes(code) ? `${message} (${code})` : message;
}

/** What the server says it is: a replica-set member, a mongos, or a standalone; and its version. */
async function describeServer(
  db: Db,
): Promise<{ kind: "replica set" | "mongos" | "standalone"; version: number[] }> {
  const hello = await db.admin().command({ hello: 1 });
  const build = await db.admin().command({ buildInfo: 1 });
  const kind =
    typeof hello.setName === "string" ? "replica set" : hello.msg === "isdbgrid" ? "mongos" : "standalone";
  const version = Array.isArray(build.versionArray) ? (build.versionArray as number[]) : [0];
  return { kind, version };
}

const older = (version: readonly number[], than: readonly number[]) =>
  (version[0] ?? 0) < (than[0] ?? 0) ||
  ((version[0] ?? 0) === (than[0] ?? 0) && (version[1] ?? 0) < (than[1] ?? 0));

/**
 * Opens a client on the replica set `url` names, checks the server and creates the layout.
 * @throws ConfigError (one line naming MONGODB_URL) for a URL the driver refuses, a server that
 * cannot be reached within the selection timeout, a standalone server or a mongos (transactions
 * and the change feed's positions need one replica set), a server older than
 * OLDEST_SUPPORTED_VERSION, or a layout that cannot be created; nothing is left open then.
 */
export async function openMongoEngine(url: string): Promise<MongoEngine> {
  const shown = shownUrl(url);
  let client: MongoClient;
  try {
    const timed = /[?&]serverSelectionTimeoutMS=/i.test(url);
    client = new MongoClient(url, timed ? {} : { serverSelectionTimeoutMS: DEFAULT_SELECTION_TIMEOUT_MS });
  } catch (error) {
    throw new ConfigError([`MONGODB_URL: not a usable MongoDB URL: ${reasonOf(error)}`]);
  }
  try {
    // Majority reads and writes by default: what a reader sees, and every write acknowledged, survives a failover.
    const db = client.db(databaseOf(url), {
      readConcern: new ReadConcern("majority"),
      writeConcern: { w: "majority" },
    });
    let server: Awaited<ReturnType<typeof describeServer>>;
    try {
      await client.connect();
      server = await describeServer(db);
    } catch (error) {
      throw new ConfigError([`MONGODB_URL: cannot use ${shown}: ${reasonOf(error)}`]);
    }
    if (server.kind !== "replica set")
      throw new ConfigError([
        `MONGODB_URL: ${shown} is a ${server.kind}; the engine needs a replica set (transactions, change streams)`,
      ]);
    if (older(server.version, OLDEST_SUPPORTED_VERSION))
      throw new ConfigError([
        `MONGODB_URL: ${shown} runs MongoDB ${server.version.slice(0, 3).join(".")}; the oldest supported is ${OLDEST_SUPPORTED_VERSION.join(".")}`,
      ]);
    try {
      await ensureLayout(db);
    } catch (error) {
      throw new ConfigError([`MONGODB_URL: creating the collections on ${shown} failed: ${reasonOf(error)}`]);
    }
    return { engine: "mongodb", url, client, db };
  } catch (error) {
    await client.close().catch(() => undefined);
    throw error;
  }
}
