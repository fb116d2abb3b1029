/**
 * The MongoDB record reads' driver shell (api/store/mongodb/records/record-read-session.ts) where it can be
 * held to something without a server: on the driver's client for a loopback port nothing listens
 * on (no MongoDB server can run on this machine; no request reaches one). Reads that need no query
 * answer without the server; every other read fails as the port's UNAVAILABLE, inside a unit of
 * work and out, never with the driver's own error (an opaque 500); a filter the compiler refuses is
 * refused before the server is asked. What the reads answer is proven on mingo
 * (record-reads-queries.test.ts, record-reads-lists.test.ts) and by the conformance suite when
 * MONGODB_TEST_URL is set.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { MongoClient, MongoError } from "mongodb";
import { prepareFilter } from "../../../api/eql/check-filter.ts";
import { parseOrderBy } from "../../../api/eql/parse-order-by.ts";
import type { FieldDef } from "../../../api/model/catalogue.ts";
import { findField } from "../../../api/model/catalogue.ts";
import { createMongoStore } from "../../../api/store/mongodb/mongodb-store.ts";
import type { Store } from "../../../api/store/store.ts";
import { BadRequestError, UnavailableError } from "../../../common/errors.ts";
import type { MongoEngine } from "../../../common/store/mongodb/mongodb-engine.ts";
import { TEST_CATALOGUE, testObject } from "../../eql/support/test-catalogue.ts";

const URL = "mongodb://127.0.0.1:9/tds";

/**
 * A store on a client of its own: a client whose first connection failed closes its topology, and
 * later operations would meet that (MongoTopologyClosedError) instead of the server's absence.
 */
function newStore(): Store {
  const client = new MongoClient(URL, { serverSelectionTimeoutMS: 200 });
  const engine: MongoEngine = { engine: "mongodb", url: URL, client, db: client.db("tds") };
  const opened = createMongoStore(engine, { attempts: 2 });
  stores.push(opened);
  return opened;
}
const stores: Store[] = [];
afterAll(() => Promise.all(stores.map((opened) => opened.close())));
const store = newStore();

const TENANT = "t1";
const NOW = Date.UTC(2024, 4, 1);
const things = testObject("Things");
const owner = findField(things, "Owner") as FieldDef;
const order = parseOrderBy("Name DESC", things, TEST_CATALOGUE);
const listQuery = { filter: null, order, after: null, offset: 0, limit: 10, now: NOW };

/** What a read settles to: its value, or the error it failed with. */
const settle = (read: Promise<unknown>) => read.catch((error: unknown) => error);

describe("the record reads without a server", () => {
  test("reads that need no query answer at once: no UIDs, a null value, no parents, no children wanted", async () => {
    const started = performance.now();
    expect(await store.findRecords(TENANT, things, [])).toEqual([]);
    expect(await store.findRecordByValue(TENANT, things, owner, null)).toBeNull();
    expect(await store.listRelated(TENANT, things, owner, [], { ...listQuery, limit: 5 })).toEqual([]);
    expect(await store.listRelated(TENANT, things, owner, ["p"], { ...listQuery, limit: 0 })).toEqual([]);
    // Well under the client's 200 ms of server selection: nothing waited for the server.
    expect(performance.now() - started).toBeLessThan(150);
  });

  test("every other read fails as UNAVAILABLE, not with the driver's error, within a second of its selection timeout", async () => {
    const reads: Record<string, (store: Store) => Promise<unknown>> = {
      findRecords: (store) => store.findRecords(TENANT, things, ["thing-1"]),
      findRecordByValue: (store) => store.findRecordByValue(TENANT, things, owner, "owner-1", "thing-1"),
      countReferencing: (store) => store.countReferencing(TENANT, things, owner, "owner-1"),
      listRecords: (store) => store.listRecords(TENANT, things, listQuery),
      countRecords: (store) => store.countRecords(TENANT, things, null, NOW),
      listRelated: (store) => store.listRelated(TENANT, things, owner, ["owner-1"], listQuery),
      exportSequences: (store) => store.exportSequences(TENANT),
    };
    for (const [name, read] of Object.entries(reads)) {
      const started = performance.now();
      const failed = await settle(read(newStore()));
      expect({ name, failed }).toMatchObject({ name, failed: { code: "unavailable" } });
      expect(failed).not.toBeInstanceOf(MongoError);
      expect(failed).toBeInstanceOf(UnavailableError);
      expect(performance.now() - started).toBeLessThan(1_200);
    }
  });

  test("a read inside a unit of work fails the unit as UNAVAILABLE", async () => {
    const failed = await settle(newStore().unitOfWork((tx) => tx.findRecords(TENANT, things, ["thing-1"])));
    expect(failed).toMatchObject({ code: "unavailable" });
    expect(failed).not.toBeInstanceOf(MongoError);
    expect(failed).toBeInstanceOf(UnavailableError);
  });

  test("a filter the compiler refuses is refused as it is, before the server is asked", async () => {
    const extended = prepareFilter("Current.Name == 'x'", things, TEST_CATALOGUE, { mode: "extended" });
    const started = performance.now();
    for (const read of [
      store.listRecords(TENANT, things, { ...listQuery, filter: extended }),
      store.countRecords(TENANT, things, extended, NOW),
    ])
      expect(await settle(read)).toBeInstanceOf(BadRequestError);
    expect(performance.now() - started).toBeLessThan(150);
  });
});
