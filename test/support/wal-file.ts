/**
 * A real SQLite file in WAL mode with a table `t (x)`, opened by two
 * connections — as the API and the dispatcher each hold their own.
 */
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface WalFile {
  path: string;
  /** Created the file and the table. */
  first: Database;
  /** A test may replace it (a connection opened anew); `remove` closes the one it holds then. */
  second: Database;
  /** Closes both connections and removes the file. */
  remove(): void;
}

export function openWalFile(prefix: string): WalFile {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const path = join(dir, "s.sqlite");
  const first = new Database(path, { create: true });
  first.run("PRAGMA journal_mode = WAL");
  first.run("CREATE TABLE t (x)");
  return {
    path,
    first,
    second: new Database(path),
    remove() {
      this.first.close();
      this.second.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
