/**
 * The write-skew plan of the MongoDB engine (api/store/mongodb/write-skew.ts), pure: for each
 * check-then-act pair that snapshot isolation would let both commit, the two sides write one
 * common document (so the second meets a write conflict and runs again), and the plan names it;
 * writes that must not wait on each other share none.
 */
import { describe, expect, test } from "bun:test";
import {
  conflictingDocuments,
  GATES,
  type GuardedWrite,
  gateOf,
  guardUpdates,
} from "../../../api/store/mongodb/write-skew.ts";
import { COLLECTION } from "../../../common/store/mongodb/layout.ts";

const regions = { id: "object-regions", custom: false };
const jobs = { id: "object-jobs", custom: false };
const widgets = { id: "object-widgets", custom: true };

const deleteRegion = (uid = "region-1", tenantId = "tenant-a"): GuardedWrite => ({
  kind: "deleteRecord",
  tenantId,
  object: regions,
  uid,
});
const insertJobIn = (region: string, uid = "job-1", tenantId = "tenant-a"): GuardedWrite => ({
  kind: "writeRecord",
  tenantId,
  object: jobs,
  uid,
  references: [{ object: regions, uid: region }],
});
const changeCatalogue = (objects = [widgets], tenantId = "tenant-a"): GuardedWrite => ({
  kind: "changeCatalogue",
  tenantId,
  objects,
});
const writeWidget = (uid: string, tenantId = "tenant-a"): GuardedWrite => ({
  kind: "writeRecord",
  tenantId,
  object: widgets,
  uid,
  references: [],
});

/** Two UIDs whose writes fall in different gates. */
const [uidA, uidB] = (() => {
  const uids = Array.from({ length: 10 }, (_, i) => `widget-${i}`);
  const first = uids[0] as string;
  const second = uids.find((uid) => gateOf(uid) !== gateOf(first)) as string;
  return [first, second];
})();

describe("write skew closed by a common document", () => {
  test("delete vs child insert: both write the parent record's document", () => {
    expect(conflictingDocuments(deleteRegion(), insertJobIn("region-1"))).toEqual([
      {
        collection: COLLECTION.standardRecords,
        filter: { t: "tenant-a", o: "object-regions", u: "region-1" },
      },
    ]);
    // The child's write increments the parent's guard count: an update that always changes it (a no-op would not conflict).
    expect(guardUpdates(insertJobIn("region-1"))).toContainEqual({
      collection: COLLECTION.standardRecords,
      filter: { t: "tenant-a", o: "object-regions", u: "region-1" },
      update: { $inc: { w: 1 } },
      upsert: false,
    });
  });

  test("two catalogue changes of a tenant: both write its catalogue counter", () => {
    const common = conflictingDocuments(changeCatalogue([]), changeCatalogue([widgets]));
    expect(common).toEqual([
      { collection: COLLECTION.counters, filter: { _id: { t: "tenant-a", k: "catalogue" } } },
    ]);
  });

  test("a catalogue change of an object vs a write of one of its records: both write the record's gate", () => {
    const common = conflictingDocuments(changeCatalogue([widgets]), writeWidget(uidA));
    expect(common).toEqual([
      {
        collection: COLLECTION.writeGates,
        filter: { _id: { t: "tenant-a", o: "object-widgets", g: gateOf(uidA) } },
      },
    ]);
    // The change takes every gate of the object, whichever record the write is of.
    expect(guardUpdates(changeCatalogue([widgets]))).toHaveLength(GATES);
  });

  test("writes that must not wait on each other share no document", () => {
    // Other tenants, other parents, other objects, records in other gates.
    expect(
      conflictingDocuments(
        deleteRegion("region-1", "tenant-a"),
        insertJobIn("region-1", "job-1", "tenant-b"),
      ),
    ).toEqual([]);
    expect(conflictingDocuments(deleteRegion("region-2"), insertJobIn("region-1"))).toEqual([]);
    expect(conflictingDocuments(changeCatalogue([widgets]), insertJobIn("region-1"))).toEqual([]);
    expect(conflictingDocuments(changeCatalogue([], "tenant-a"), changeCatalogue([], "tenant-b"))).toEqual(
      [],
    );
    expect(conflictingDocuments(writeWidget(uidA), writeWidget(uidB))).toEqual([]);
  });

  test("a record referring to itself adds no guard on itself (the write is that record's already)", () => {
    const self: GuardedWrite = {
      kind: "writeRecord",
      tenantId: "tenant-a",
      object: regions,
      uid: "region-1",
      references: [{ object: regions, uid: "region-1" }],
    };
    expect(guardUpdates(self).map((update) => update.collection)).toEqual([COLLECTION.writeGates]);
  });

  test("gates spread UIDs: 10,000 random UIDs fill every gate, none with more than twice its share", () => {
    const counts = new Array<number>(GATES).fill(0);
    for (let i = 0; i < 10_000; i++) {
      const gate = gateOf(crypto.randomUUID());
      counts[gate] = (counts[gate] ?? 0) + 1;
    }
    expect(Math.min(...counts)).toBeGreaterThan(0);
    expect(Math.max(...counts)).toBeLessThan((2 * 10_000) / GATES);
  });
});
