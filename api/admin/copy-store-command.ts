/**
 * The admin tool's `copy-store` command: argv in, the stores it names opened (each through the
 * store factory, migrated as any process would), the copy run (copy-store.ts), the counts out as
 * lines; progress of a long copy goes to `progress` as it runs. Opens no store of the environment's.
 */
import { existsSync } from "node:fs";
import { parseArgs } from "node:util";
import { BadRequestError, ConfigError, NotFoundError } from "../../common/errors.ts";
import {
  describeStoreLocation,
  MONGODB_EXPERIMENTAL_REFUSAL,
  type StoreLocation,
  storeLocationNamed,
} from "../../common/store/store-location.ts";
import { openStore } from "../store/open-store.ts";
import type { Store } from "../store/store.ts";
import { type CopyCounts, copyStore } from "./copy-store.ts";

export const COPY_STORE_USAGE = `  copy-store --from <store> --to <store> [--into-non-empty] [--page-size <rows>]
      copies a whole store into an empty one, of any engine; a store is a postgres:// URL, a
      SQLite file's path (or its DATA_DIR), or a mongodb:// URL to copy from (with
      STORE_EXPERIMENTAL=mongodb; never into: MongoDB bounds the copy's one transaction). The source must be idle (stop its API processes and
      dispatchers first); the copy commits whole or not at all. --into-non-empty adds the source's
      tenants beside those the target holds`;

/** How often, at most, a progress line is written (ms). */
const PROGRESS_EVERY_MS = 1000;

/**
 * Runs `copy-store` with its arguments (`argv` after the command's name).
 * @returns the lines to print: what was copied where, the counts, and what the target's processes need.
 * @throws BadRequestError for bad arguments (MongoDB as the target; as the source without
 * STORE_EXPERIMENTAL=mongodb in `env`), NotFoundError for a source that is not there,
 * ConflictError from the copy (copy-store.ts), ConfigError for a store that cannot be opened.
 */
export async function runCopyStoreCommand(
  argv: string[],
  progress: (line: string) => void = () => undefined,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<string[]> {
  const { values } = parseArgs({
    args: argv,
    options: {
      from: { type: "string" },
      to: { type: "string" },
      "into-non-empty": { type: "boolean" },
      "page-size": { type: "string" },
    },
  });
  if (!values.from || !values.to)
    throw new BadRequestError(`copy-store needs --from and --to\nusage:\n${COPY_STORE_USAGE}`);
  const pageSize = values["page-size"] === undefined ? undefined : Number(values["page-size"]);
  if (pageSize !== undefined && !(Number.isInteger(pageSize) && pageSize > 0 && pageSize <= 10_000))
    throw new BadRequestError("--page-size must be a whole number from 1 to 10000");
  const from = storeLocationNamed(values.from);
  const to = storeLocationNamed(values.to);
  // The copy is one unit of work on the target: on MongoDB one transaction, which the server bounds
  // in time (transactionLifetimeLimitSeconds, 60 s by default) and size, and aborts past them.
  if (to.engine === "mongodb")
    throw new BadRequestError(
      "--to: a copy cannot go into the MongoDB engine: it is one transaction, and MongoDB bounds a transaction's time (60 s by default) and size; copy out of it instead",
    );
  if (from.engine === "mongodb" && env.STORE_EXPERIMENTAL !== "mongodb")
    throw new BadRequestError(`--from: ${MONGODB_EXPERIMENTAL_REFUSAL}`);
  if (from.engine === "sqlite" && !existsSync(from.path))
    throw new NotFoundError(`--from: no SQLite store at ${from.path}`);

  const source = await opened("--from", from);
  try {
    const target = await opened("--to", to);
    try {
      let shownAt = Date.now();
      const counts = await copyStore(source, target, {
        intoNonEmpty: values["into-non-empty"] ?? false,
        pageSize,
        onProgress(counts, stage) {
          if (Date.now() - shownAt < PROGRESS_EVERY_MS) return;
          shownAt = Date.now();
          progress(`copying ${stage}: ${counts.records} records, ${counts.deliveries} deliveries so far`);
        },
      });
      return [
        `copied ${describeStoreLocation(from)} → ${describeStoreLocation(to)}`,
        ...countLines(counts),
        "the target's processes need the source's JWT_SECRET and SECRETS_KEY (a SQLite store's DATA_DIR keeps them in jwt-secret and secrets-key when they are not set): tokens are checked and secrets opened with them",
      ];
    } finally {
      await target.close();
    }
  } finally {
    await source.close();
  }
}

/** Opens the store at `location`; a store that cannot be used is named by the option that gave it. */
async function opened(option: string, location: StoreLocation): Promise<Store> {
  try {
    return await openStore(location);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    throw new ConfigError(error.problems.map((problem) => `${option}: ${problem}`));
  }
}

/** One line per kind: its name, then its count. */
function countLines(counts: Readonly<CopyCounts>): string[] {
  const byObject = Object.entries(counts.recordsByObject)
    .map(([name, count]) => `${name} ${count}`)
    .join(", ");
  const rows: [string, number, string?][] = [
    ["tenants", counts.tenants],
    ["users", counts.users],
    ["tokens", counts.tokens],
    ["custom objects", counts.customObjects],
    ["custom fields", counts.customFields],
    ["records", counts.records, byObject && `(${byObject})`],
    ["sequences", counts.sequences],
    ["webhooks", counts.webhooks, "(secrets copied sealed)"],
    ["config variables", counts.configVariables, `(${counts.secretConfigVariables} secret, copied sealed)`],
    ["deliveries", counts.deliveries],
    ["delivery attempts", counts.deliveryAttempts],
    [
      "change-log entries",
      counts.changes,
      "(not yet handed on by the source's feed: the target's feed hands them on)",
    ],
  ];
  return rows.map(
    ([kind, count, note]) => `${kind.padEnd(20)}${String(count).padStart(9)}${note ? ` ${note}` : ""}`,
  );
}
