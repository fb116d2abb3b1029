/**
 * A client that writes through the real API and keeps its own model of what
 * it wrote: it plans mutations (insert, update, upsert, delete over standard
 * and custom objects, one to three operations each, on records only it
 * touches), sends them, and on each acknowledged answer records the changes
 * the service committed. When the answer never came (the API was killed), it
 * asks the API afterwards which operations took effect, checking that a
 * mutation took effect wholly or not at all. Every written value carries a
 * fresh tag, so every change an expected element describes is unique.
 */
import type { ApiClient } from "./api-client.ts";
import type { ModelChange, ObjectName, Value, Values } from "./hook-specs.ts";

type PlannedOp =
  | { kind: "insert"; object: ObjectName; input: Values }
  | { kind: "update"; object: ObjectName; uid: string; input: Values }
  | { kind: "upsert"; object: "Gadgets"; key: string; uid: string | null; input: Values }
  | { kind: "delete"; object: ObjectName; uid: string };

export interface PlannedMutation {
  ops: PlannedOp[];
  document: string;
  variables?: Record<string, unknown>;
}

/** A mutation the service committed, with the changes the model expects it to have made. */
export interface CommittedMutation {
  writer: number;
  seq: number;
  changes: ModelChange[];
  sentAt: number;
  /** When the answer arrived; null when the answer was lost and the commit found by reading back. */
  ackedAt: number | null;
}

export type StepOutcome =
  | { kind: "acked"; mutation: CommittedMutation }
  /** The service answered with errors: nothing was committed. */
  | { kind: "rejected"; message: string }
  /** No answer (connection lost, timeout, non-200): call `resolve` once the API is back. */
  | { kind: "unknown"; planned: PlannedMutation; sentAt: number; reason: string };

export interface WriterOptions {
  id: number;
  seed: number;
  /** A region the writer's jobs point at (created before the webhooks, never deleted). */
  regionId: string;
  /** `mixed`: every object and operation, 1–3 operations; `load`: one operation on Regions or Gadgets, each matched. */
  profile: "mixed" | "load";
  /** Unique per run, in every tag. */
  runTag: string;
  /**
   * `variables`: fixed documents, values in variables (as most clients send
   * them; the service's document cache hits); `inline`: values written into
   * each document (every document new to the service). Default `variables`.
   */
  style?: "variables" | "inline";
}

/** mulberry32: a small seeded generator, so a failing run can be replayed from its seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const literal = (value: Value) => (value === null ? "null" : JSON.stringify(value));
const inputText = (input: Values) =>
  `{${Object.entries(input)
    .map(([key, value]) => `${key}: ${literal(value)}`)
    .join(", ")}}`;
const lowerFirst = (name: string) => name.charAt(0).toLowerCase() + name.slice(1);

const DURATIONS = [10, 20, 30, 45, 60];
const JOB_STATUSES = ["Queued", "Dispatched", "Complete", "Cancelled"];
/** The field whose value is unique to a record as inserted, to find it again. */
const INSERT_TAG: Record<ObjectName, string> = {
  Regions: "Description",
  Jobs: "Description",
  Contacts: "FirstName",
  Gadgets: "ExternalId",
};

export type Writer = ReturnType<typeof createWriter>;

export function createWriter(client: ApiClient, options: WriterOptions) {
  const random = seededRandom(options.seed);
  const records: Record<ObjectName, Map<string, Values>> = {
    Regions: new Map(),
    Jobs: new Map(),
    Contacts: new Map(),
    Gadgets: new Map(),
  };
  let seq = 0;
  let tagCount = 0;
  const tag = () => `${options.runTag}-w${options.id}-${++tagCount}`;
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const chance = (p: number) => random() < p;

  function insertInput(object: ObjectName): Values {
    const t = tag();
    switch (object) {
      case "Regions":
        return { Name: `R-${t}`, Timezone: "UTC", Description: t };
      case "Jobs":
        return { Duration: pick(DURATIONS), RegionId: options.regionId, Description: t };
      case "Contacts":
        return { LastName: `${pick(["a", "A", "b"])}-${t}`, FirstName: t };
      case "Gadgets":
        return { ExternalId: `g-${t}`, Note: t, Size: 1 + Math.floor(random() * 100) };
    }
  }

  function updateInput(object: ObjectName): Values {
    const t = tag();
    switch (object) {
      case "Regions":
        return chance(0.3) ? { Description: t, Name: `R-${t}` } : { Description: t };
      case "Jobs": {
        const which = random();
        if (which < 1 / 3) return { Description: t };
        return which < 2 / 3
          ? { Description: t, Duration: pick(DURATIONS) }
          : { Description: t, JobStatus: pick(JOB_STATUSES) };
      }
      case "Contacts":
        return chance(0.5) ? { LastName: `${pick(["a", "A", "b"])}-${t}` } : { FirstName: t };
      case "Gadgets":
        return chance(0.6) ? { Note: t, Size: 1 + Math.floor(random() * 100) } : { Note: t };
    }
  }

  function planOp(taken: Set<string>): PlannedOp {
    const objects: ObjectName[] =
      options.profile === "load" ? ["Regions", "Gadgets"] : ["Regions", "Jobs", "Contacts", "Gadgets"];
    const object = pick(objects);
    const free = [...records[object].keys()].filter((uid) => !taken.has(uid));
    const roll = random();
    if (object === "Gadgets" && roll < 0.2) {
      const uid = free.length > 0 && chance(0.5) ? pick(free) : null;
      const existing = uid ? records.Gadgets.get(uid) : undefined;
      if (uid) taken.add(uid);
      const input = existing
        ? { ExternalId: existing.ExternalId ?? null, ...updateInput("Gadgets") }
        : insertInput("Gadgets");
      return { kind: "upsert", object, key: String(input.ExternalId), uid, input };
    }
    // Updates and deletes need a record; the first writes of a run are inserts.
    if (free.length === 0 || roll < 0.4) return { kind: "insert", object, input: insertInput(object) };
    const uid = pick(free);
    taken.add(uid);
    return roll < 0.8
      ? { kind: "update", object, uid, input: { UID: uid, ...updateInput(object) } }
      : { kind: "delete", object, uid };
  }

  function plan(): PlannedMutation {
    const size = options.profile === "load" ? 1 : pick([1, 1, 1, 1, 2, 2, 3]);
    const taken = new Set<string>();
    const ops = Array.from({ length: size }, () => planOp(taken));
    return options.style === "inline" ? inlineDocument(ops) : variablesDocument(ops);
  }

  function variablesDocument(ops: PlannedOp[]): PlannedMutation {
    const variables: Record<string, unknown> = {};
    const declarations: string[] = [];
    const fields = ops.map((op, i) => {
      if (op.kind === "delete") {
        variables[`v${i}`] = op.uid;
        declarations.push(`$v${i}: ID!`);
        return `o${i}: delete${op.object}(UID: $v${i})`;
      }
      variables[`v${i}`] = op.input;
      declarations.push(`$v${i}: ${op.kind === "update" ? "Update" : "New"}${op.object}!`);
      const keyField = op.kind === "upsert" ? `, keyField: "ExternalId"` : "";
      return `o${i}: ${op.kind}${op.object}(input: $v${i}${keyField})`;
    });
    const document = `mutation Write(${declarations.join(", ")}) { schema { ${fields.join(" ")} } }`;
    return { ops, document, variables };
  }

  function inlineDocument(ops: PlannedOp[]): PlannedMutation {
    const fields = ops.map((op, i) => {
      switch (op.kind) {
        case "insert":
          return `o${i}: insert${op.object}(input: ${inputText(op.input)})`;
        case "update":
          return `o${i}: update${op.object}(input: ${inputText(op.input)})`;
        case "upsert":
          return `o${i}: upsert${op.object}(input: ${inputText(op.input)}, keyField: "ExternalId")`;
        default:
          return `o${i}: delete${op.object}(UID: ${literal(op.uid)})`;
      }
    });
    return { ops, document: `mutation { schema { ${fields.join(" ")} } }` };
  }

  /** Applies committed operations to the model; `uids[i]` is operation i's answer. */
  function apply(ops: PlannedOp[], uids: (string | null)[]): ModelChange[] {
    return ops.map((op, i): ModelChange => {
      const store = records[op.object];
      if (op.kind === "delete") {
        const before = store.get(op.uid) as Values;
        store.delete(op.uid);
        return { object: op.object, operation: "DELETE", before, after: null };
      }
      const uid = op.kind === "insert" || (op.kind === "upsert" && !op.uid) ? uids[i] : op.uid;
      if (typeof uid !== "string") throw new Error(`operation ${i} answered no UID: ${JSON.stringify(uids)}`);
      const before = store.get(uid) ?? null;
      const defaults: Values = op.object === "Jobs" ? { JobStatus: "Queued" } : {};
      const after: Values = before ? { ...before, ...op.input } : { ...defaults, ...op.input, UID: uid };
      store.set(uid, after);
      return { object: op.object, operation: before ? "UPDATE" : "INSERT", before, after };
    });
  }

  /** Sends the next mutation. */
  async function step(timeoutMs = 10_000): Promise<StepOutcome> {
    const planned = plan();
    const sentAt = Date.now();
    let answer: Awaited<ReturnType<ApiClient["graphql"]>>;
    try {
      answer = await client.graphql(planned.document, planned.variables, { timeoutMs });
    } catch (error) {
      return { kind: "unknown", planned, sentAt, reason: String(error) };
    }
    if (answer.errors) return { kind: "rejected", message: JSON.stringify(answer.errors) };
    const schema = (answer.data?.schema ?? {}) as Record<string, string | null>;
    const changes = apply(
      planned.ops,
      planned.ops.map((_, i) => schema[`o${i}`] ?? null),
    );
    return {
      kind: "acked",
      mutation: { writer: options.id, seq: ++seq, changes, sentAt, ackedAt: Date.now() },
    };
  }

  /**
   * After an unknown outcome, with the API answering again: reads back whether
   * the mutation took effect and updates the model. @returns the mutation when
   * it was committed, null when it was not.
   * @throws when some of its operations took effect and others did not.
   */
  async function resolve(
    outcome: Extract<StepOutcome, { kind: "unknown" }>,
  ): Promise<CommittedMutation | null> {
    const { ops } = outcome.planned;
    const reads = ops.map((op, i) => {
      const list = lowerFirst(op.object);
      if (op.kind === "insert" || op.kind === "upsert") {
        const field = op.kind === "upsert" ? "ExternalId" : INSERT_TAG[op.object];
        const filter = JSON.stringify(`${field} == '${op.input[field]}'`);
        return `q${i}: ${list}(filter: ${filter}) { edges { node { UID Tag: ${op.kind === "upsert" ? "Note" : field} } } }`;
      }
      const field = op.kind === "update" ? (Object.keys(op.input).find((k) => k !== "UID") as string) : "UID";
      return `q${i}: ${list}ById(UID: ${literal(op.uid)}) { UID Tag: ${field} }`;
    });
    const answer = await client.graphql(`{ ${reads.join(" ")} }`);
    if (answer.errors) throw new Error(`reading back failed: ${JSON.stringify(answer.errors)}`);
    const data = answer.data as Record<string, unknown>;
    const found = ops.map((op, i) => {
      const read = data[`q${i}`] as {
        edges?: { node: { UID: string; Tag: Value } }[];
        UID?: string;
        Tag?: Value;
      };
      if (op.kind === "delete") return { applied: read === null, uid: null };
      const node = op.kind === "update" ? read : (read.edges?.[0]?.node ?? null);
      const wanted =
        op.kind === "upsert"
          ? op.input.Note
          : op.input[Object.keys(op.input).find((k) => k !== "UID") as string];
      const applied = op.kind === "insert" ? node !== null : node !== null && node.Tag === wanted;
      return { applied, uid: node?.UID ?? null };
    });
    const applied = found.filter((f) => f.applied).length;
    if (applied !== 0 && applied !== ops.length)
      throw new Error(
        `mutation partly applied (${applied} of ${ops.length} operations): ${outcome.planned.document}`,
      );
    if (applied === 0) return null;
    const changes = apply(
      ops,
      found.map((f) => f.uid),
    );
    return { writer: options.id, seq: ++seq, changes, sentAt: outcome.sentAt, ackedAt: null };
  }

  return { id: options.id, plan, step, resolve, records };
}
