/**
 * The matcher on its own: one mutation's changes × subscriptions → each subscriber's elements (SPEC.md §8).
 * Subscriptions are built as the parser builds them; the changes as the change log holds them.
 */
import { describe, expect, test } from "bun:test";
import { prepareFilter } from "../../api/eql/check-filter.ts";
import { assembleCatalogue } from "../../api/model/assemble-catalogue.ts";
import { findObject, type ObjectDef } from "../../api/model/catalogue.ts";
import { makeField } from "../../api/model/field-factory.ts";
import type {
  ChangeOperation,
  FeedCursor,
  LoggedChange,
  RecordValues,
} from "../../api/model/record-values.ts";
import { type MatchContext, matchChanges } from "../../api/subscriptions/match-changes.ts";
import type { Member, Subscription } from "../../api/subscriptions/subscription.ts";

const GADGET: ObjectDef = {
  id: "9a1c2b3d-0000-4000-8000-000000000001",
  name: "Gadget",
  label: "Gadget",
  description: null,
  mapping: "__gadget",
  custom: true,
  tracked: false,
  fields: [],
};
const CATALOGUE = assembleCatalogue("t1", {
  version: 1,
  objects: [GADGET],
  fields: [makeField("Gadget", "Code", { type: "string", custom: true })],
});
const objectNamed = (name: string) => findObject(CATALOGUE, name) as ObjectDef;

const COMMITTED_AT = Date.UTC(2024, 4, 1, 10, 0, 0, 123);
const REGIONS: Record<string, RecordValues> = {
  north: { UID: "north", Name: "North" },
  south: { UID: "south", Name: "South" },
};

/** The feed's context: references read from REGIONS; every object tracked but those named. */
const contextWith = (untracked: readonly string[] = []): MatchContext => ({
  now: COMMITTED_AT,
  lookup: (objectName, uid) => (objectName === "Regions" ? (REGIONS[uid] ?? null) : null),
  select: () => [],
  isTracked: (objectName) => !untracked.includes(objectName),
});

interface SubscriptionSpec {
  object?: string;
  rootKey?: string;
  operations?: ChangeOperation[];
  filter?: string;
  extendedFilter?: string;
  members?: Member[];
}

/** A parsed subscription: by default `schemaJobs { operation }` (no field under data: every UPDATE fires). */
function subscribe(spec: SubscriptionSpec = {}): Subscription {
  const object = objectNamed(spec.object ?? "Jobs");
  const members = spec.members ?? [{ key: "operation", kind: "operation" }];
  const data = members.find((member) => member.kind === "data");
  const check = (text: string | undefined, mode: "filter" | "extended") =>
    text === undefined ? null : prepareFilter(text, object, CATALOGUE, { mode });
  return {
    object,
    rootKey: spec.rootKey ?? `schema${object.name}`,
    operations: spec.operations ? new Set(spec.operations) : null,
    filter: check(spec.filter, "filter"),
    extendedFilter: check(spec.extendedFilter, "extended"),
    members,
    // As the parser derives it: the record fields selected under data.
    watched: data && "fields" in data ? data.fields.map((f) => f.field) : [],
  };
}

/** `operation` and `data { <fields> }`, each under its own name. */
const selecting = (...fields: string[]): Member[] => [
  { key: "operation", kind: "operation" },
  { key: "data", kind: "data", fields: fields.map((field) => ({ key: field, field })) },
];

const JOB: RecordValues = {
  UID: "j1",
  Name: "J-1",
  Description: "first",
  JobStatus: "Queued",
  Duration: 30,
  Region: "north",
  Start: Date.UTC(2024, 4, 2, 8, 30),
};

/** Change entries of one mutation, in their order within it. */
function mutation(
  ...changes: Pick<LoggedChange, "objectName" | "operation" | "before" | "after">[]
): LoggedChange[] {
  return changes.map((change, sequence) => ({
    tenantId: "t1",
    uid: ((change.after ?? change.before) as RecordValues).UID as string,
    mutationId: "m1",
    sequence,
    committedAt: COMMITTED_AT,
    // The matcher never reads it: any text stands in for a cursor the store would make.
    cursor: `cursor-${sequence}` as FeedCursor,
    ...change,
  }));
}
const insert = (after: RecordValues = JOB, objectName = "Jobs") =>
  ({ objectName, operation: "INSERT", before: null, after }) as const;
const update = (changed: RecordValues, before: RecordValues = JOB, objectName = "Jobs") =>
  ({ objectName, operation: "UPDATE", before, after: { ...before, ...changed } }) as const;
const remove = (before: RecordValues = JOB, objectName = "Jobs") =>
  ({ objectName, operation: "DELETE", before, after: null }) as const;

/** The operations of the elements `subscription` gets from `changes` (its members must include `operation`). */
function firedBy(subscription: Subscription, changes: LoggedChange[], context = contextWith()): string[] {
  const matches = matchChanges(changes, [{ subscription }], context);
  return (matches[0]?.elements ?? []).map(
    (element) =>
      (element as { data: Record<string, { operation: string }> }).data[subscription.rootKey]?.operation ??
      "?",
  );
}

const ALL = mutation(insert(), update({ JobStatus: "Dispatched" }), remove());

describe("which changes fire a subscription", () => {
  const CASES: [rule: string, spec: SubscriptionSpec, changes: LoggedChange[], fired: string[]][] = [
    ["no operation argument: every operation", {}, ALL, ["INSERT", "UPDATE", "DELETE"]],
    ["operation: [INSERT, DELETE]", { operations: ["INSERT", "DELETE"] }, ALL, ["INSERT", "DELETE"]],
    ["operation: UPDATE", { operations: ["UPDATE"] }, ALL, ["UPDATE"]],
    ["another object's changes never", { object: "Regions" }, ALL, []],
    [
      "UPDATE: a change to a field selected in data fires",
      { members: selecting("JobStatus") },
      mutation(update({ JobStatus: "Dispatched" })),
      ["UPDATE"],
    ],
    [
      "UPDATE: a change to fields not selected in data does not",
      { members: selecting("JobStatus") },
      mutation(update({ Description: "second", Duration: 45 })),
      [],
    ],
    [
      "UPDATE: a field selected only under previous is not watched",
      {
        members: [
          ...selecting("JobStatus"),
          { key: "previous", kind: "previous", fields: [{ key: "Description", field: "Description" }] },
        ],
      },
      mutation(update({ Description: "second" })),
      [],
    ],
    [
      "UPDATE: a value written again unchanged is no change",
      { members: selecting("JobStatus", "Duration") },
      mutation(update({ JobStatus: "Queued", Duration: 30 })),
      [],
    ],
    [
      "UPDATE: a reference moved is a change of the field selected as <Ref>Id",
      {
        members: [
          { key: "operation", kind: "operation" },
          { key: "data", kind: "data", fields: [{ key: "RegionId", field: "Region" }] },
        ],
      },
      mutation(update({ Region: "south" })),
      ["UPDATE"],
    ],
    [
      "UPDATE: nothing selected under data, any change fires",
      {},
      mutation(update({ Description: "second" })),
      ["UPDATE"],
    ],
    [
      "INSERT and DELETE fire whatever the selection",
      { members: selecting("JobStatus") },
      mutation(insert(), remove()),
      ["INSERT", "DELETE"],
    ],
    [
      "filter: on the new values of an INSERT and an UPDATE",
      { filter: "Duration >= 10" },
      mutation(insert(), update({ Duration: 5 }), update({ Duration: 60 }, { ...JOB, Duration: 5 })),
      ["INSERT", "UPDATE"],
    ],
    [
      "filter: on the last values of a DELETE",
      { filter: "Duration >= 10" },
      mutation(remove(), remove({ ...JOB, UID: "j2", Duration: 5 })),
      ["DELETE"],
    ],
    [
      "filter: following a reference through the context's lookup",
      { filter: "Region.Name == 'North'" },
      mutation(insert(), insert({ ...JOB, UID: "j2", Region: "south" })),
      ["INSERT"],
    ],
    [
      "extendedFilter: Previous is absent on INSERT",
      { extendedFilter: "Previous.UID == null" },
      ALL,
      ["INSERT"],
    ],
    [
      "extendedFilter: Current is absent on DELETE",
      { extendedFilter: "Current.UID == null" },
      ALL,
      ["DELETE"],
    ],
    [
      "extendedFilter: Operation",
      { extendedFilter: "Operation IN ['INSERT', 'UPDATE']" },
      ALL,
      ["INSERT", "UPDATE"],
    ],
    [
      "extendedFilter: Previous against Current on UPDATE",
      { extendedFilter: "Previous.JobStatus != Current.JobStatus", operations: ["UPDATE"] },
      mutation(update({ Description: "second" }), update({ JobStatus: "Dispatched" })),
      ["UPDATE"],
    ],
    [
      "filter and extendedFilter must both hold",
      { filter: "Duration >= 10", extendedFilter: "Operation != 'UPDATE'" },
      mutation(insert(), update({ Description: "second" }), remove({ ...JOB, Duration: 5 }), remove()),
      ["INSERT", "DELETE"],
    ],
  ];
  test.each(CASES)("%s", (_rule, spec, changes, fired) =>
    expect(firedBy(subscribe(spec), changes)).toEqual(fired),
  );

  test("an untracked custom object fires nothing; tracked, it fires", () => {
    const gadgets = subscribe({ object: "Gadget" });
    const changes = mutation(insert({ UID: "g1", Code: "x" }, "Gadget"), insert({ ...JOB, UID: "j9" }));
    expect(firedBy(gadgets, changes, contextWith(["Gadget"]))).toEqual([]);
    expect(firedBy(subscribe(), changes, contextWith(["Gadget"]))).toEqual(["INSERT"]);
    expect(firedBy(gadgets, changes, contextWith())).toEqual(["INSERT"]);
  });
});

describe("the element of a change", () => {
  test("members in the order selected, under their keys (aliases), within { data: { <root key> } }", () => {
    const subscription = subscribe({
      rootKey: "jobs",
      members: [
        { key: "at", kind: "timestamp" },
        {
          key: "now",
          kind: "data",
          fields: [
            { key: "status", field: "JobStatus" },
            { key: "RegionId", field: "Region" },
            { key: "Start", field: "Start" },
            { key: "End", field: "End" },
          ],
        },
        { key: "op", kind: "operation" },
      ],
    });
    const [match] = matchChanges(mutation(insert()), [{ subscription }], contextWith());
    // Byte for byte: the receiver sees the members in the order the query selected them.
    expect(JSON.stringify(match?.elements)).toBe(
      JSON.stringify([
        {
          data: {
            jobs: {
              at: "2024-05-01T10:00:00.123Z",
              now: { status: "Queued", RegionId: "north", Start: "2024-05-02T08:30:00.000Z", End: null },
              op: "INSERT",
            },
          },
        },
      ]),
    );
  });

  test("data and previous: INSERT both the new values, UPDATE after and before, DELETE both the last values", () => {
    const fields = [
      { key: "JobStatus", field: "JobStatus" },
      { key: "Duration", field: "Duration" },
    ];
    const subscription = subscribe({
      members: [
        { key: "operation", kind: "operation" },
        { key: "data", kind: "data", fields },
        { key: "previous", kind: "previous", fields },
      ],
    });
    const updated = { ...JOB, JobStatus: "Dispatched" };
    const changes = mutation(insert(), update({ JobStatus: "Dispatched" }), remove(updated));
    const [match] = matchChanges(changes, [{ subscription }], contextWith());
    const queued = { JobStatus: "Queued", Duration: 30 };
    const dispatched = { JobStatus: "Dispatched", Duration: 30 };
    expect(match?.elements).toEqual([
      { data: { schemaJobs: { operation: "INSERT", data: queued, previous: queued } } },
      { data: { schemaJobs: { operation: "UPDATE", data: dispatched, previous: queued } } },
      { data: { schemaJobs: { operation: "DELETE", data: dispatched, previous: dispatched } } },
    ]);
  });
});

describe("several subscribers, several changes", () => {
  const jobs = { id: "jobs", subscription: subscribe() };
  const regions = { id: "regions", subscription: subscribe({ object: "Regions" }) };
  const deletes = { id: "deletes", subscription: subscribe({ operations: ["DELETE"] }) };
  const changes = mutation(
    insert(),
    insert({ UID: "r1", Name: "East", Timezone: "UTC" }, "Regions"),
    update({ JobStatus: "Dispatched" }),
    insert({ ...JOB, UID: "j2" }),
  );

  test("one match per subscriber some change fires, in the subscribers' order; its elements in mutation order", () => {
    const matches = matchChanges(changes, [regions, deletes, jobs], contextWith());
    expect(matches.map((match) => match.subscriber)).toEqual([regions, jobs]);
    // The subscriber itself comes back, so the caller keeps whatever it holds beside the subscription.
    expect(matches[0]?.subscriber).toBe(regions);
    expect(matches.map((match) => match.elements.length)).toEqual([1, 3]);
    expect(firedBy(jobs.subscription, changes)).toEqual(["INSERT", "UPDATE", "INSERT"]);
  });

  test("no change, no subscriber: no match", () => {
    expect(matchChanges([], [jobs, regions], contextWith())).toEqual([]);
    expect(matchChanges(changes, [], contextWith())).toEqual([]);
  });
});
