/**
 * The webhooks the flow tests subscribe, each written twice: as the GraphQL
 * subscription the service is given, and as a plain predicate and shape the
 * test computes expectations with (written from SPEC.md §8, sharing no code
 * with the service's matcher). A committed change in, the element the
 * receiver must get (or none) out.
 */

export type ObjectName = "Regions" | "Jobs" | "Contacts" | "Gadgets";
export type ChangeOperation = "INSERT" | "UPDATE" | "DELETE";
export type Value = string | number | null;
export type Values = Record<string, Value>;

/** One record change of a committed mutation, as the test's model saw it. */
export interface ModelChange {
  object: ObjectName;
  operation: ChangeOperation;
  before: Values | null;
  after: Values | null;
}

type Member =
  | { kind: "operation" }
  | { kind: "timestamp" }
  | { kind: "data"; fields: string[] }
  | { kind: "previous"; fields: string[] };

export interface HookSpec {
  name: string;
  object: ObjectName;
  operations?: ChangeOperation[];
  filter?: { text: string; test: (values: Values) => boolean };
  extendedFilter?: {
    text: string;
    test: (current: Values | null, previous: Values | null, operation: ChangeOperation) => boolean;
  };
  members: Member[];
}

/** The custom object the writers write besides the standard ones, as `POST /custom/standalone/schemas` takes it. */
export const GADGETS = {
  name: "Gadgets",
  fields: [
    { name: "ExternalId", column: { type: "string", unique: true } },
    { name: "Note", column: { type: "string" } },
    { name: "Size", column: { type: "int" } },
  ],
};

/** Stands for an element's `timestamp` in expected bodies; the received one is checked separately. */
const TIMESTAMP = "<timestamp>";

const num = (value: Value) => (typeof value === "number" ? value : Number.NaN);

export const HOOK_SPECS: HookSpec[] = [
  {
    name: "regions",
    object: "Regions",
    members: [
      { kind: "operation" },
      { kind: "timestamp" },
      { kind: "data", fields: ["UID", "Name", "Description"] },
      { kind: "previous", fields: ["UID", "Name", "Description"] },
    ],
  },
  {
    name: "long-jobs",
    object: "Jobs",
    operations: ["INSERT", "UPDATE"],
    filter: { text: "Duration >= 30", test: (v) => num(v.Duration ?? null) >= 30 },
    members: [
      { kind: "operation" },
      { kind: "data", fields: ["UID", "Duration", "JobStatus"] },
      { kind: "timestamp" },
      { kind: "previous", fields: ["Description", "Duration", "JobStatus"] },
    ],
  },
  {
    name: "job-deletes",
    object: "Jobs",
    operations: ["DELETE"],
    members: [
      { kind: "data", fields: ["UID", "Description", "Duration"] },
      { kind: "operation" },
      { kind: "timestamp" },
    ],
  },
  {
    name: "dispatched-jobs",
    object: "Jobs",
    operations: ["UPDATE"],
    filter: {
      text: "JobStatus IN ['Dispatched', 'Complete']",
      test: (v) => v.JobStatus === "Dispatched" || v.JobStatus === "Complete",
    },
    members: [
      { kind: "timestamp" },
      { kind: "data", fields: ["UID", "JobStatus"] },
      { kind: "previous", fields: ["Description", "JobStatus"] },
    ],
  },
  {
    name: "a-contacts",
    object: "Contacts",
    filter: { text: "LastName LIKE 'a%'", test: (v) => /^a/i.test(String(v.LastName ?? "")) },
    members: [{ kind: "timestamp" }, { kind: "operation" }, { kind: "data", fields: ["UID", "LastName"] }],
  },
  {
    name: "gadgets",
    object: "Gadgets",
    members: [
      { kind: "operation" },
      { kind: "timestamp" },
      { kind: "data", fields: ["UID", "ExternalId", "Note", "Size"] },
      { kind: "previous", fields: ["Note", "Size"] },
    ],
  },
  {
    name: "growing-gadgets",
    object: "Gadgets",
    extendedFilter: {
      text: "Operation == 'UPDATE' AND Current.Size > Previous.Size",
      test: (current, previous, operation) =>
        operation === "UPDATE" &&
        current?.Size != null &&
        previous?.Size != null &&
        num(current.Size) > num(previous.Size),
    },
    members: [
      { kind: "timestamp" },
      { kind: "data", fields: ["UID", "Size", "Note"] },
      { kind: "previous", fields: ["Size"] },
    ],
  },
];

/** The subscription document the service is given for `spec`. */
export function subscriptionOf(spec: HookSpec): string {
  const args: string[] = [];
  if (spec.operations) args.push(`operation: [${spec.operations.join(", ")}]`);
  if (spec.filter) args.push(`filter: ${JSON.stringify(spec.filter.text)}`);
  if (spec.extendedFilter) args.push(`extendedFilter: ${JSON.stringify(spec.extendedFilter.text)}`);
  const members = spec.members.map((m) =>
    m.kind === "data" || m.kind === "previous" ? `${m.kind} { ${m.fields.join(" ")} }` : m.kind,
  );
  const argText = args.length > 0 ? `(${args.join(", ")})` : "";
  return `subscription { schema${spec.object}${argText} { ${members.join(" ")} } }`;
}

function fires(spec: HookSpec, change: ModelChange): boolean {
  if (spec.object !== change.object) return false;
  if (spec.operations && !spec.operations.includes(change.operation)) return false;
  if (change.operation === "UPDATE") {
    const watched = spec.members.flatMap((m) => (m.kind === "data" ? m.fields : []));
    const changed = watched.some((f) => (change.before?.[f] ?? null) !== (change.after?.[f] ?? null));
    if (!changed) return false;
  }
  const values = (change.after ?? change.before) as Values;
  if (spec.filter && !spec.filter.test(values)) return false;
  if (spec.extendedFilter && !spec.extendedFilter.test(change.after, change.before, change.operation))
    return false;
  return true;
}

/** The element `spec` must receive for `change`, with TIMESTAMP in place of the time; null when it must not fire. */
export function expectedElement(spec: HookSpec, change: ModelChange): unknown | null {
  if (!fires(spec, change)) return null;
  const data = (change.after ?? change.before) as Values;
  const previous = change.operation === "UPDATE" ? (change.before as Values) : data;
  const pick = (values: Values, fields: string[]) =>
    Object.fromEntries(fields.map((f) => [f, values[f] ?? null]));
  const event: Record<string, unknown> = {};
  for (const member of spec.members) {
    if (member.kind === "operation") event.operation = change.operation;
    else if (member.kind === "timestamp") event.timestamp = TIMESTAMP;
    else event[member.kind] = pick(member.kind === "data" ? data : previous, member.fields);
  }
  return { data: { [`schema${spec.object}`]: event } };
}

/** A received body with every element's `timestamp` replaced by TIMESTAMP; returns the timestamps found too. */
export function canonicalBody(body: unknown): { text: string; timestamps: string[] } {
  const timestamps: string[] = [];
  if (!Array.isArray(body)) return { text: JSON.stringify(body), timestamps };
  const elements = body.map((element) => {
    const inner = (element as { data?: Record<string, Record<string, unknown>> })?.data;
    const event = inner ? Object.values(inner)[0] : undefined;
    if (event && typeof event.timestamp === "string") {
      timestamps.push(event.timestamp);
      event.timestamp = TIMESTAMP;
    }
    return element;
  });
  return { text: JSON.stringify(elements), timestamps };
}
