/**
 * The identity members of the MongoDB store (api/store/mongodb/identity/identity-session.ts) where they can
 * be held to something without a server (none can run on this machine): a taken name's duplicate
 * key becomes the ConflictError the other engines raise, worded as theirs (driver-errors.ts,
 * `uniquely`), through the driver's REAL `withTransaction` on a session of a client that never
 * connects, the duplicate key being the driver's real error class with the server's fields
 * (scripted, as in unit-of-work.test.ts); and the members are wired into the store: in a unit of
 * work they reach for the server (and fail as UNAVAILABLE without one) rather than answering that
 * the engine lacks them. What they read and write is identity-documents.test.ts's.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { MongoClient, MongoServerError } from "mongodb";
import { createMongoStore } from "../../../api/store/mongodb/mongodb-store.ts";
import type { StoreWriter } from "../../../api/store/store.ts";
import { ConflictError, UnavailableError } from "../../../common/errors.ts";
import { uniquely } from "../../../common/store/mongodb/driver-errors.ts";
import { runInTransaction } from "../../../common/store/mongodb/transaction.ts";

// A loopback port nothing listens on: a client is never connected.
const URL = "mongodb://127.0.0.1:9/tds";
const client = new MongoClient(URL, { serverSelectionTimeoutMS: 100 });
afterAll(() => client.close());

/** A store on a client of its own: a client whose first connection failed answers "topology closed" after. */
function unconnectedStore() {
  const own = new MongoClient(URL, { serverSelectionTimeoutMS: 100 });
  // Two runs at most: without a server, a run inside a transaction may count as transient.
  return createMongoStore({ engine: "mongodb", url: URL, client: own, db: own.db("tds") }, { attempts: 2 });
}

/** The server's answer to a second tenant named `acme` (tenant_name holds `nameKey`). */
const nameTaken = () =>
  new MongoServerError({
    message:
      'E11000 duplicate key error collection: tds.tenants index: tenant_name dup key: { nameKey: "acme" } (scripted)',
    code: 11000,
    codeName: "DuplicateKey",
    keyPattern: { nameKey: 1 },
    keyValue: { nameKey: "acme" },
  });

describe("a taken name", () => {
  test("a duplicate key is the ConflictError the other engines raise, in their words", async () => {
    const refused = await uniquely(async () => {
      throw nameTaken();
    }, "a tenant named 'ACME' exists already").catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ConflictError);
    expect(refused).toMatchObject({ code: "conflict", message: "a tenant named 'ACME' exists already" });
  });

  test("so fails the unit of work, through withTransaction, once (a duplicate key is not run again)", async () => {
    const session = client.startSession();
    let runs = 0;
    try {
      const refused = await runInTransaction(session, () => {
        runs++;
        return uniquely(async () => {
          throw new MongoServerError({
            message: "E11000 (scripted)",
            code: 11000,
            keyPattern: { t: 1, usernameKey: 1 },
            keyValue: { t: "tenant-a", usernameKey: "ada" },
          });
        }, "the tenant has a user named 'Ada' already");
      }).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(ConflictError);
      expect((refused as Error).message).toBe("the tenant has a user named 'Ada' already");
      expect(runs).toBe(1);
    } finally {
      await session.endSession();
    }
  });

  test("anything else passes as it is, and a write that succeeds resolves to its value", async () => {
    const other = new MongoServerError({ message: "scripted", code: 2, codeName: "BadValue" });
    expect(
      await uniquely(async () => {
        throw other;
      }, "unused").catch((error: unknown) => error),
    ).toBe(other);
    expect(await uniquely(async () => 42, "unused")).toBe(42);
  });
});

describe("the identity members are the store's", () => {
  const tenant = { id: "tenant-a", name: "Acme", createdAt: 1 };
  const writes: [string, (tx: StoreWriter) => Promise<unknown>][] = [
    ["insertTenant", (tx) => tx.insertTenant(tenant)],
    ["findTenantByName in a unit", (tx) => tx.findTenantByName("acme")],
    ["revokeToken", (tx) => tx.revokeToken("tenant-a", "t-1", 1)],
  ];
  test.each(writes)("%s reaches for the server: UNAVAILABLE without one", async (_, work) => {
    const store = unconnectedStore();
    try {
      const refused = await store.unitOfWork(work).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(UnavailableError);
      expect(refused).toMatchObject({ code: "unavailable" });
    } finally {
      await store.close();
    }
  });
});
