/**
 * The SQLite engine opened (common/store/open-engine.ts picks it): the store
 * file created when absent and migrated, one connection on it, more on request.
 */
import type { Database } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { migrate } from "./migrations.ts";
import { openSqliteConnection } from "./sqlite-connection.ts";

/** The SQLite engine, opened: its file migrated, one connection on it, more on request. */
export interface SqliteEngine {
  readonly engine: "sqlite";
  /** The store file (`:memory:`: a private in-memory database, one connection only). */
  readonly path: string;
  /** The connection the migrations ran on; whoever builds on the engine closes it. */
  readonly connection: Database;
  /** Opens another connection to the same file, set up alike; its caller closes it. */
  connect(): Database;
}

/** Opens the store file at `path` (creating it and its folder when absent) and migrates it. */
export function openSqliteEngine(path: string): SqliteEngine {
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const connection = openSqliteConnection(path);
  try {
    migrate(connection);
  } catch (error) {
    connection.close();
    throw error;
  }
  return { engine: "sqlite", path, connection, connect: () => openSqliteConnection(path) };
}
