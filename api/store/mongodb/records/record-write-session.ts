/**
 * The record writes of the MongoDB engine (the records port's RecordWriter
 * but `nextSequenceValue`, which counter-session.ts keeps): a write in, the
 * plan's driver writes (record-write-plan.ts, record-import-plan.ts) issued in order, in the unit of
 * work's transaction. The only decisions here are the lookups the plan needs
 * (a reference's target object) and which typed error a failed write means,
 * which the plan says per write.
 */
import type { ClientSession, Db, Document } from "mongodb";
import { COLLECTION } from "../../../../common/store/mongodb/layout.ts";
import { STANDARD_OBJECTS } from "../../../model/standard-objects.ts";
import type { RecordWriter } from "../../ports/records-port.ts";
import { customObjectByName } from "../catalogue/catalogue-documents.ts";
import type { PlannedObject } from "../write-skew.ts";
import {
  missingTarget,
  type PlannedWrite,
  probeFailure,
  type RecordStep,
  type Reference,
  type ResolvedReference,
  type TwoStepPlan,
  writeFailure,
} from "./planned-write.ts";
import { uidFieldOf } from "./record-documents.ts";
import { planImport, planSequenceImport } from "./record-import-plan.ts";
import { planDelete, planInsert, planUpdate, referencesOf } from "./record-write-plan.ts";

/** The record writes but `insertUnlessTaken`, which the session makes of `insertRecord` (../../insert-looking-up-first.ts). */
export type RecordWriteMembers = Pick<
  RecordWriter,
  "insertRecord" | "updateRecord" | "deleteRecord" | "importRecords" | "importSequences"
>;

type InUnit = { session: ClientSession } | Record<string, never>;

const STANDARD_TARGETS = new Map<string, PlannedObject>(
  STANDARD_OBJECTS.map((object) => [object.name, { id: object.id, custom: false }]),
);

/** Issues `writes` in order; a failure is thrown as the error the plan says it means. */
async function issue(db: Db, inUnit: InUnit, writes: readonly PlannedWrite[]): Promise<void> {
  for (const write of writes) {
    const collection = db.collection(write.collection);
    if (write.kind === "insert") {
      try {
        if (write.documents.length === 1) await collection.insertOne(write.documents[0] as Document, inUnit);
        else await collection.insertMany(write.documents, { ...inUnit, ordered: true });
      } catch (error) {
        throw writeFailure(error, write.clashes);
      }
    } else if (write.kind === "delete") {
      await collection.deleteMany(write.filter, inUnit);
    } else if (write.kind === "targets") {
      const found = await collection.find(write.filter, { ...inUnit, projection: { o: 1, u: 1 } }).toArray();
      const failure = missingTarget(found, write);
      if (failure) throw failure;
    } else if (write.kind === "probe") {
      const found = await collection.find(write.filter, { ...inUnit, projection: { u: 1 } }).toArray();
      const failure = probeFailure(found, write);
      if (failure) throw failure;
    } else if (write.kind === "updates") {
      const operations = write.updates.map((updateOne) => ({ updateOne }));
      await collection.bulkWrite(operations, { ...inUnit, ordered: true });
    } else {
      await collection.updateOne(write.filter, write.update, { ...inUnit, upsert: write.upsert });
    }
  }
}

/** The record step of an update or a delete: the record written, its keyed values as they were read back (null: none). */
async function writeRecord(db: Db, inUnit: InUnit, step: RecordStep): Promise<Document | null> {
  const collection = db.collection(step.collection);
  const options = { ...inUnit, projection: step.projection };
  if (step.update === null) return collection.findOneAndDelete(step.filter, options);
  try {
    return await collection.findOneAndUpdate(step.filter, step.update, {
      ...options,
      returnDocument: "before",
    });
  } catch (error) {
    throw writeFailure(error, [step.clash]);
  }
}

/** The record writes on `db`, in the unit of work of `session`. */
export function createRecordWriteSession(db: Db, session: ClientSession | null): RecordWriteMembers {
  const inUnit: InUnit = session ? { session } : {};
  // Custom objects found in this run of the unit of work (a missing one is looked up again: the unit may create it).
  const customTargets = new Map<string, PlannedObject>();

  const targetOf = async (tenantId: string, name: string): Promise<PlannedObject | null> => {
    const standard = STANDARD_TARGETS.get(name);
    if (standard) return standard;
    const cacheKey = `${tenantId}\u0000${name}`;
    const cached = customTargets.get(cacheKey);
    if (cached) return cached;
    const found = await db
      .collection<{ _id: string }>(COLLECTION.customObjects)
      .findOne(customObjectByName(tenantId, name), { ...inUnit, projection: { _id: 1 } });
    if (!found) return null;
    const target = { id: String(found._id), custom: true };
    customTargets.set(cacheKey, target);
    return target;
  };
  const resolve = async (tenantId: string, references: Reference[]): Promise<ResolvedReference[]> => {
    const resolved: ResolvedReference[] = [];
    // One after another: a transaction's statements are sent in turn.
    for (const reference of references)
      resolved.push({
        ...reference,
        target: await targetOf(tenantId, reference.field.referenceTo as string),
      });
    return resolved;
  };
  const runTwoSteps = async (plan: TwoStepPlan) => {
    await issue(db, inUnit, plan.before);
    const previous = await writeRecord(db, inUnit, plan.record);
    await issue(db, inUnit, plan.after(previous));
  };

  return {
    async insertRecord(tenantId, object, values) {
      const uid = values[uidFieldOf(object).name] as string;
      const references = await resolve(tenantId, referencesOf(object, object.fields, values, uid));
      await issue(db, inUnit, planInsert(tenantId, object, values, references));
    },
    async updateRecord(tenantId, object, uid, values) {
      const fields = object.fields.filter((field) => field.name in values);
      if (fields.length === 0) return;
      const references = await resolve(tenantId, referencesOf(object, fields, values, uid));
      await runTwoSteps(planUpdate(tenantId, object, uid, values, references));
    },
    async deleteRecord(tenantId, object, uid) {
      await runTwoSteps(planDelete(tenantId, object, uid));
    },
    async importRecords(tenantId, object, records) {
      await issue(db, inUnit, planImport(tenantId, object, records));
    },
    async importSequences(tenantId, sequences) {
      await issue(db, inUnit, planSequenceImport(tenantId, sequences));
    },
  };
}
