/**
 * Units of work on MongoDB (common/store/mongodb/transaction.ts) and the driver's errors as the
 * service's (driver-errors.ts). No MongoDB server can run on this machine, so these run on the
 * driver's REAL ClientSession of a client that never connects: its `withTransaction` — the
 * driver's retry loop and backoff, the transaction options it applies — runs as in production,
 * because a transaction in which no command was sent commits and aborts without a server. The
 * work's statements are SCRIPTED instead of sent: each run throws what the script says, as the
 * driver's real error objects (`MongoServerError` with the server's codes and labels,
 * `MongoNetworkError`, …). That script is the one stand-in, stated plainly.
 */

import { afterAll, describe, expect, test } from "bun:test";
import {
  type ClientSession,
  MongoBulkWriteError,
  MongoClient,
  MongoNetworkError,
  MongoNotConnectedError,
  MongoOperationTimeoutError,
  MongoServerError,
  MongoTopologyClosedError,
} from "mongodb";
import {
  ConflictError,
  PayloadTooLargeError,
  ReferenceNotFoundError,
  UnavailableError,
  UniqueViolationError,
} from "../../../common/errors.ts";
import { toServiceError } from "../../../common/store/mongodb/driver-errors.ts";
import { runInTransaction, TRANSACTION_OPTIONS } from "../../../common/store/mongodb/transaction.ts";
import { writeConflict } from "./scripted-stream.ts";

// A loopback port nothing listens on: the client is never connected, and nothing here needs it to be.
const client = new MongoClient("mongodb://127.0.0.1:9/tds", { serverSelectionTimeoutMS: 100 });
afterAll(() => client.close());

const duplicateRecordKey = () =>
  new MongoServerError({
    message: "E11000 duplicate key error (scripted)",
    code: 11000,
    codeName: "DuplicateKey",
    keyPattern: { _id: 1 },
    keyValue: { _id: { t: "tenant-a", o: "object-jobs", f: "field-code", v: "J-1" } },
  });

/**
 * The session's transaction as the driver keeps it (internal to its types, read here to prove the
 * options it applies and the state it is in).
 */
const transactionOf = (session: ClientSession) =>
  (session as unknown as { transaction: { options: unknown; state: string } }).transaction;

/** Runs `script` through runInTransaction on a real session: each run throws the script's next error, or returns. */
async function runScript(script: (Error | "commit")[], attempts?: number) {
  const session = client.startSession();
  const runs: { run: number; options: unknown; state: string }[] = [];
  try {
    const value = await runInTransaction(
      session,
      async (runSession, run) => {
        runs.push({
          run,
          options: transactionOf(runSession).options,
          state: transactionOf(runSession).state,
        });
        const next = script[run - 1] ?? "commit";
        if (next !== "commit") throw next;
        return `committed on run ${run}`;
      },
      {
        ...(attempts ? { attempts } : {}),
        nameKey: (key) => (key.f === "field-code" ? { object: "Jobs", field: "Code" } : null),
      },
    );
    return { value, runs, state: transactionOf(session).state };
  } catch (error) {
    return { error, runs, state: transactionOf(session).state };
  } finally {
    await session.endSession();
  }
}

describe("a unit of work through withTransaction", () => {
  test("every run is a transaction with snapshot reads and majority writes on the primary, as TRANSACTION_OPTIONS says", async () => {
    const { value, runs, state } = await runScript(["commit"]);
    expect(value).toBe("committed on run 1");
    expect(state).toBe("TRANSACTION_COMMITTED_EMPTY");
    const options = runs[0]?.options as {
      readConcern: unknown;
      writeConcern: unknown;
      readPreference: unknown;
    };
    expect(JSON.parse(JSON.stringify(options.readConcern))).toEqual({ level: "snapshot" });
    expect(options.writeConcern).toMatchObject({ w: "majority" });
    expect(JSON.parse(JSON.stringify(options.readPreference))).toMatchObject({ mode: "primary" });
    expect(TRANSACTION_OPTIONS.writeConcern).toEqual({ w: "majority" });
  });

  test("a write conflict (112, TransientTransactionError) runs the work again, each run afresh, and the last run's value commits", async () => {
    const { value, runs } = await runScript([writeConflict(), writeConflict(), "commit"]);
    expect(value).toBe("committed on run 3");
    expect(runs.map((r) => r.run)).toEqual([1, 2, 3]);
    // Each run starts a new transaction: nothing of the run before is in progress.
    expect(runs.map((r) => r.state)).toEqual([
      "STARTING_TRANSACTION",
      "STARTING_TRANSACTION",
      "STARTING_TRANSACTION",
    ]);
  });

  test("write conflicts are retried a bounded number of times, then refused as UNAVAILABLE (runs ≤ attempts)", async () => {
    const started = performance.now();
    const { error, runs } = await runScript(Array.from({ length: 50 }, writeConflict), 6);
    expect(runs).toHaveLength(6);
    expect(error).toBeInstanceOf(UnavailableError);
    expect((error as UnavailableError).message).toContain("6 attempts");
    // The driver's backoff between runs (5 ms × 1.5ⁿ, jittered) stays far below its 120 s limit.
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  test("a duplicate key in record_keys is not retried: one run, a UniqueViolationError naming the field and value", async () => {
    const { error, runs } = await runScript([duplicateRecordKey()]);
    expect(runs).toHaveLength(1);
    expect(error).toBeInstanceOf(UniqueViolationError);
    expect((error as Error).message).toBe('Jobs.Code must be unique: another record has "J-1"');
  });

  test("the service's own errors thrown by the work pass through as thrown, after one run", async () => {
    const refused = new ReferenceNotFoundError("Jobs.Region: no Regions record with UID 'x'");
    const { error, runs } = await runScript([refused]);
    expect(runs).toHaveLength(1);
    expect(error).toBe(refused);
  });

  test("a network error is not the work's fault: one run, UNAVAILABLE", async () => {
    const { error, runs } = await runScript([new MongoNetworkError("connection reset (scripted)")]);
    expect(runs).toHaveLength(1);
    expect(error).toBeInstanceOf(UnavailableError);
  });
});

describe("driver errors as the service's", () => {
  const server = (fields: Record<string, unknown>) =>
    new MongoServerError({ message: "scripted", ...fields } as ConstructorParameters<
      typeof MongoServerError
    >[0]);
  const cases: [string, unknown, new (...args: never[]) => Error, string | null][] = [
    [
      "a record key (11000 in record_keys) the caller can name",
      duplicateRecordKey(),
      UniqueViolationError,
      'Jobs.Code must be unique: another record has "J-1"',
    ],
    [
      "a record key the caller cannot name",
      server({
        code: 11000,
        keyPattern: { _id: 1 },
        keyValue: { _id: { t: "a", o: "b", f: "other", v: 1 } },
      }),
      UniqueViolationError,
      "a unique value is another record's",
    ],
    [
      "another unique index (a webhook's name)",
      server({ code: 11000, keyPattern: { t: 1, name: 1 }, keyValue: { t: "a", name: "hook" } }),
      ConflictError,
      "a unique value is taken (t, name)",
    ],
    ["a write conflict left after the last run", writeConflict(), UnavailableError, null],
    [
      "a primary stepping down (189)",
      server({ code: 189, codeName: "PrimarySteppedDown" }),
      UnavailableError,
      null,
    ],
    [
      "a node shutting down (91)",
      server({ code: 91, codeName: "ShutdownInProgress" }),
      UnavailableError,
      null,
    ],
    [
      "a client closed (a request still running at shutdown)",
      new MongoTopologyClosedError(),
      UnavailableError,
      null,
    ],
    ["a client never connected", new MongoNotConnectedError("scripted"), UnavailableError, null],
    [
      "no answer within the operation's time",
      new MongoOperationTimeoutError("scripted"),
      UnavailableError,
      null,
    ],
    [
      "a document over 16 MiB (10334)",
      server({ code: 10334, codeName: "BSONObjectTooLarge" }),
      PayloadTooLargeError,
      null,
    ],
  ];
  test.each(cases)("%s", (_, driverError, type, message) => {
    const mapped = toServiceError(driverError, (key) =>
      key.f === "field-code" ? { object: "Jobs", field: "Code" } : null,
    );
    expect(mapped).toBeInstanceOf(type);
    if (message !== null) expect((mapped as Error).message).toBe(message);
  });

  test("a bulk write's duplicate key names the key document from the operation it failed on", () => {
    const bulk = new MongoBulkWriteError(
      {
        message: "E11000 (scripted)",
        code: 11000,
        writeErrors: [
          {
            code: 11000,
            index: 0,
            errmsg: "E11000 (scripted)",
            errInfo: {},
            getOperation: () => ({
              _id: { t: "tenant-a", o: "object-jobs", f: "field-code", v: "J-2" },
              u: "uid",
            }),
          },
        ],
      } as never,
      { insertedCount: 0 } as never,
    );
    const mapped = toServiceError(bulk, () => ({ object: "Jobs", field: "Code" }));
    expect(mapped).toBeInstanceOf(UniqueViolationError);
    expect((mapped as Error).message).toBe('Jobs.Code must be unique: another record has "J-2"');
  });

  test("an error nothing here knows is left as it is (the API answers it as an opaque 500)", () => {
    const unknown = server({ code: 2, codeName: "BadValue" });
    expect(toServiceError(unknown)).toBe(unknown);
    const plain = new Error("not the driver's");
    expect(toServiceError(plain)).toBe(plain);
  });
});
