/**
 * Which test files run on which store engine: the test files and their
 * sources in, one list per engine out. SQLite runs them all. PostgreSQL runs
 * those that open a store: every file whose imports lead (through any chain)
 * to the store factory (common/store/open-engine.ts) or to the harness of
 * real processes (test/support/service-processes.ts), and every file marked
 * `@test-engines all` (one that starts the processes by path, where no import
 * shows it). A file marked `@test-engines sqlite`, with its reason beside the
 * mark, runs on SQLite only: it tests that engine itself or reads its file;
 * one marked `@test-engines postgres` runs on PostgreSQL only. MongoDB (when
 * a replica set is reachable) runs PostgreSQL's list but the files marked for
 * PostgreSQL alone. Files that open no store (the pure cores) would only run
 * the same code again, so they run once.
 */
import { dirname, join, normalize } from "node:path";

/** What decides a test file runs on PostgreSQL too. */
export const ENGINE_ROOTS = ["common/store/open-engine.ts", "test/support/service-processes.ts"];

const MARK = /@test-engines\s+(sqlite|postgres|all)\b/;

/** A file's text and the repository-relative files it imports (relative imports only). */
export interface SourceFile {
  text: string;
  imports: string[];
}

/** The relative imports `text` names, resolved against `file` (repository-relative paths). */
export function relativeImports(file: string, specifiers: readonly string[]): string[] {
  return specifiers
    .filter((spec) => spec.startsWith("."))
    .map((spec) => normalize(join(dirname(file), spec)));
}

/**
 * The plan: `sqlite` every test file not marked PostgreSQL-only; `postgres` those that open a store
 * and are not marked SQLite-only, and those marked PostgreSQL-only; `mongodb` those that open a
 * store and are marked for no one engine. `read` gives a file's source (null for one that is not there).
 */
export function planTestRuns(
  tests: readonly string[],
  read: (file: string) => SourceFile | null,
): { sqlite: string[]; postgres: string[]; mongodb: string[] } {
  const reaches = new Map<string, boolean>();
  const reachesRoot = (file: string, path: Set<string>): boolean => {
    const known = reaches.get(file);
    if (known !== undefined) return known;
    if (ENGINE_ROOTS.includes(file)) return true;
    if (path.has(file)) return false;
    path.add(file);
    const found = (read(file)?.imports ?? []).some((next) => reachesRoot(next, path));
    path.delete(file);
    reaches.set(file, found);
    return found;
  };
  const markOf = (file: string) => MARK.exec(read(file)?.text ?? "")?.[1];
  const postgres = tests.filter((file) => {
    const mark = markOf(file);
    if (mark === "sqlite") return false;
    return mark === "all" || mark === "postgres" || reachesRoot(file, new Set());
  });
  return {
    sqlite: tests.filter((file) => markOf(file) !== "postgres"),
    postgres,
    mongodb: postgres.filter((file) => markOf(file) !== "postgres"),
  };
}
