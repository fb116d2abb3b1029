/**
 * The record writes' driver shell (api/store/mongodb/records/record-write-session.ts) where it can be held
 * to something without a server: the MongoDB store on the driver's client for a loopback port
 * nothing listens on (no MongoDB server can run on this machine; the client never connects). A
 * write with nothing to write sends no command (its unit of work commits, as a transaction that
 * sent nothing does); one that must reach the server fails as UNAVAILABLE, the driver's error
 * never escaping. What the writes send is proven by record-writes-plan.test.ts; that the server
 * takes it, only by the conformance suite with MONGODB_TEST_URL.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { MongoClient } from "mongodb";
import { createMongoStore } from "../../../api/store/mongodb/mongodb-store.ts";
import type { Store, StoreWriter } from "../../../api/store/store.ts";
import { customObject, newRecord } from "../conformance/fixtures.ts";

/** A store on a client that never connects (each its own: a client whose first connection failed stays closed). */
const opened: Store[] = [];
afterAll(() => Promise.all(opened.map((store) => store.close())));

function unreachableStore(): Store {
  const client = new MongoClient("mongodb://127.0.0.1:9/tds", { serverSelectionTimeoutMS: 200 });
  const store = createMongoStore({
    engine: "mongodb",
    url: "mongodb://127.0.0.1:9/tds",
    client,
    db: client.db("tds"),
  });
  opened.push(store);
  return store;
}

const owners = customObject("Owners", { Name: { type: "string" }, Code: { type: "string", unique: true } });

describe("the record writes without a server", () => {
  test("an update of no field, an import of no record or sequence send nothing: the unit of work commits", async () => {
    const done = await unreachableStore().unitOfWork(async (tx) => {
      await tx.updateRecord("tenant-a", owners, "uid-1", {});
      await tx.updateRecord("tenant-a", owners, "uid-1", { NotAField: "x" });
      await tx.importRecords("tenant-a", owners, []);
      await tx.importSequences("tenant-a", []);
      return "committed";
    });
    expect(done).toBe("committed");
  });

  test("a write that must reach the server fails as UNAVAILABLE, quickly, not with the driver's error", async () => {
    const started = performance.now();
    const record = newRecord(owners, "user-1", { Name: "a", Code: "k-1" });
    const writes: ((tx: StoreWriter) => Promise<unknown>)[] = [
      (tx) => tx.insertRecord("tenant-a", owners, record),
      (tx) => tx.updateRecord("tenant-a", owners, record.UID as string, { Name: "b" }),
      (tx) => tx.deleteRecord("tenant-a", owners, record.UID as string),
      (tx) => tx.importRecords("tenant-a", owners, [record]),
      (tx) => tx.importSequences("tenant-a", [{ name: "jobs", value: 3 }]),
    ];
    const refusals = await Promise.all(
      writes.map((write) =>
        unreachableStore()
          .unitOfWork(write)
          .catch((error: unknown) => error),
      ),
    );
    for (const refused of refusals) expect(refused).toMatchObject({ code: "unavailable" });
    expect(performance.now() - started).toBeLessThan(10_000);
  });
});
