/** The standard objects' behaviours table: consistent with the model, and each behaviour by a table of cases. */
import { describe, expect, test } from "bun:test";
import type { ObjectDef } from "../../api/model/catalogue.ts";
import type { ChangeEntry, RecordValues } from "../../api/model/record-values.ts";
import { STANDARD_OBJECTS } from "../../api/model/standard-objects.ts";
import {
  behavioursOf,
  checkFieldOrder,
  counterDeltas,
  deriveFields,
  generatedNameOf,
  type ParentCounter,
  STANDARD_BEHAVIOURS,
} from "../../api/records/standard-behaviours.ts";

const standard = (name: string) => STANDARD_OBJECTS.find((object) => object.name === name) as ObjectDef;
const fieldOf = (object: string, field: string) => standard(object)?.fields.find((f) => f.name === field);

describe("the table agrees with the model", () => {
  const rows = Object.entries(STANDARD_BEHAVIOURS);

  test("every row names a standard object", () => {
    expect(rows.map(([name]) => name).filter((name) => !standard(name))).toEqual([]);
  });

  test("what a behaviour writes is a read-only field of the right type; what it reads exists", () => {
    const problems: string[] = [];
    const expectField = (object: string, field: string, type: string, readOnly: boolean) => {
      const found = fieldOf(object, field);
      if (found?.type !== type || found.readOnly !== readOnly)
        problems.push(`${object}.${field}: want ${type}${readOnly ? ", read-only" : ""}`);
    };
    for (const [name, row] of rows) {
      if (row.generatedName) expectField(name, row.generatedName.field, "string", true);
      for (const field of Object.keys(row.derived ?? {})) expectField(name, field, "string", true);
      for (const order of row.fieldOrder ?? []) {
        expectField(name, order.before, "datetime", false);
        expectField(name, order.after, "datetime", false);
      }
      if (row.countedBy) {
        const reference = fieldOf(name, row.countedBy.reference);
        if (reference?.type !== "reference")
          problems.push(`${name}.${row.countedBy.reference}: want reference`);
        expectField(reference?.referenceTo ?? "?", row.countedBy.counter, "int", true);
        if (fieldOf(reference?.referenceTo ?? "?", row.countedBy.counter)?.defaultValue !== 0)
          problems.push(`${row.countedBy.counter}: a count starts at 0`);
      }
    }
    expect(problems).toEqual([]);
  });

  test("every read-only field of a standard object (besides the system fields) is set by a behaviour", () => {
    const set = new Set<string>();
    for (const [name, row] of rows) {
      if (row.generatedName) set.add(`${name}.${row.generatedName.field}`);
      for (const field of Object.keys(row.derived ?? {})) set.add(`${name}.${field}`);
      if (row.countedBy) {
        const parent = fieldOf(name, row.countedBy.reference)?.referenceTo;
        set.add(`${parent}.${row.countedBy.counter}`);
      }
    }
    const readOnly = STANDARD_OBJECTS.flatMap((object) =>
      object.fields.filter((f) => f.readOnly && !f.system).map((f) => `${object.name}.${f.name}`),
    );
    expect(readOnly.sort()).toEqual([...set].sort());
  });
});

describe("behavioursOf", () => {
  test.each([
    ["a standard object: its row", standard("Jobs"), STANDARD_BEHAVIOURS.Jobs],
    ["a standard object without a row: none", standard("Regions"), {}],
    ["a custom object can never take a standard one's behaviours", { ...standard("Jobs"), custom: true }, {}],
    ["a name on Object.prototype is no row", { ...standard("Regions"), name: "constructor" }, {}],
  ])("%s", (_case, object, expected) => {
    expect(behavioursOf(object as ObjectDef)).toEqual(expected as object);
  });
});

describe("generated names", () => {
  const jobs = STANDARD_BEHAVIOURS.Jobs?.generatedName;
  const allocations = STANDARD_BEHAVIOURS.JobAllocations?.generatedName;
  test.each([
    [jobs, 1, "JOB-0001"],
    [jobs, 9999, "JOB-9999"],
    [jobs, 12345, "JOB-12345"],
    [allocations, 7, "JA-0007"],
  ])("%o, %i → %s", (generated, value, expected) => {
    if (!generated) throw new Error("no generated name");
    expect(generatedNameOf(generated, value)).toBe(expected);
  });
  test("each object numbers from its own sequence", () => {
    expect([jobs?.sequence, allocations?.sequence]).toEqual(["Jobs.Name", "JobAllocations.Name"]);
  });
});

describe("Contacts.FullName", () => {
  test.each([
    ["Ada", "Lovelace", "Ada Lovelace"],
    [null, "Lovelace", "Lovelace"],
    ["", "Lovelace", "Lovelace"],
    ["Ada", null, "Ada"],
    [null, null, null],
  ])("%p + %p → %p", (FirstName, LastName, FullName) => {
    const record: RecordValues = { FirstName, LastName, FullName: "stale" };
    deriveFields(behavioursOf(standard("Contacts")), record);
    expect(record.FullName).toBe(FullName);
  });
});

describe("field order", () => {
  const at = (hour: number) => Date.UTC(2024, 4, 1, hour);
  test.each([
    ["Jobs", { Start: at(9), End: at(10) }, []],
    ["Jobs", { Start: at(9), End: at(9) }, []],
    ["Jobs", { Start: at(10), End: at(9) }, [{ path: "End", message: "must be at or after Start" }]],
    ["Jobs", { Start: at(10), End: null }, []],
    [
      "JobAllocations",
      { Start: at(10), End: at(9) },
      [{ path: "End", message: "must be at or after Start" }],
    ],
    ["Availabilities", { Start: at(9), Finish: at(9) }, [{ path: "Finish", message: "must be after Start" }]],
    ["Availabilities", { Start: at(9), Finish: at(10) }, []],
    ["Regions", { Start: at(10), End: at(9) }, []],
  ])("%s %o", (name, record, problems) => {
    expect(checkFieldOrder(behavioursOf(standard(name)), record as RecordValues)).toEqual(problems);
  });
});

describe("JobAllocations counted by their Job (Status not Deleted)", () => {
  const counter = STANDARD_BEHAVIOURS.JobAllocations?.countedBy as ParentCounter;
  const allocation = (Job: string | null, Status = "Dispatched"): RecordValues => ({ Job, Status });
  const entry = (before: RecordValues | null, after: RecordValues | null) =>
    ({ before, after }) as ChangeEntry;
  test.each([
    ["insert", [entry(null, allocation("a"))], { a: 1 }],
    ["insert of a deleted one", [entry(null, allocation("a", "Deleted"))], {}],
    ["status set to Deleted", [entry(allocation("a"), allocation("a", "Deleted"))], { a: -1 }],
    ["status back from Deleted", [entry(allocation("a", "Deleted"), allocation("a"))], { a: 1 }],
    ["moved to another job", [entry(allocation("a"), allocation("b"))], { a: -1, b: 1 }],
    ["another field changed", [entry(allocation("a"), allocation("a", "Confirmed"))], {}],
    ["delete", [entry(allocation("a"), null)], { a: -1 }],
    ["without a job", [entry(null, allocation(null))], {}],
    [
      "several in one operation",
      [entry(null, allocation("a")), entry(null, allocation("a")), entry(allocation("b"), null)],
      { a: 2, b: -1 },
    ],
  ])("%s", (_case, entries, deltas) => {
    expect(Object.fromEntries(counterDeltas(counter, entries))).toEqual(deltas);
  });
});
