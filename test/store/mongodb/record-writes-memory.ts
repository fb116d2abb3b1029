/**
 * In-memory collections that carry out the MongoDB engine's record-write plans
 * (api/store/mongodb/records/record-write-plan.ts, record-import-plan.ts) the way record-write-session.ts hands them to the
 * driver, with mingo (an independent interpreter of MongoDB's query and update language) doing
 * every match, update and projection. No MongoDB server can run on this machine; mingo stands in
 * for one. What this adds of its own, stated plainly: documents pass through the driver's BSON
 * serializer and back as the server would store and return them; `_id` is unique in every
 * collection and `{t, o, u}` in the record collections (the server's `_id` index and the layout's
 * record_uid), a clash failing with the driver's own duplicate-key error classes (code 11000) at
 * the index of the document that met it; `transaction` puts every collection back as it was when
 * its work throws (a unit of work that fails keeps nothing). It proves none of the server's
 * indexes, transactions, write conflicts or concurrency.
 */
import { Query, update, updateOne } from "mingo";
import { BSON, type Document, MongoBulkWriteError, MongoServerError, ObjectId } from "mongodb";
import {
  missingTarget,
  type PlannedWrite,
  probeFailure,
  type RecordStep,
  writeFailure,
} from "../../../api/store/mongodb/records/planned-write.ts";
import { COLLECTION } from "../../../common/store/mongodb/layout.ts";

const RECORD_COLLECTIONS = new Set<string>([COLLECTION.standardRecords, COLLECTION.customRecords]);

/** A document as the server keeps it and hands it back: through BSON both ways. */
const stored = (document: Document): Document => BSON.deserialize(BSON.serialize(document));

const duplicateOf = (index: number, count: number, document: Document): Error => {
  if (count === 1)
    return new MongoServerError({ message: "E11000 duplicate key error (in memory)", code: 11000 });
  return new MongoBulkWriteError(
    {
      message: "E11000 duplicate key error (in memory)",
      code: 11000,
      writeErrors: [
        { code: 11000, index, errmsg: "E11000 (in memory)", errInfo: {}, getOperation: () => document },
      ],
    } as never,
    { insertedCount: index } as never,
  );
};

/** Every write the executor was handed, in order: what a test counts and inspects. */
export interface IssuedWrite {
  collection: string;
  kind: PlannedWrite["kind"] | "record";
}

export class MemoryCollections {
  private readonly collections = new Map<string, Document[]>();
  readonly issued: IssuedWrite[] = [];

  /** The documents of `name` (live: the executor mutates them). */
  of(name: string): Document[] {
    let documents = this.collections.get(name);
    if (!documents) {
      documents = [];
      this.collections.set(name, documents);
    }
    return documents;
  }

  /** The documents of `name` that `filter` matches. */
  find(name: string, filter: Document = {}): Document[] {
    const query = new Query(filter);
    return this.of(name).filter((document) => query.test(document));
  }

  /** Runs `work`; when it throws, every collection is put back as it was, and the error rethrown. */
  transaction<T>(work: () => T): T {
    const saved = new Map([...this.collections].map(([name, docs]) => [name, docs.map(stored)]));
    try {
      return work();
    } catch (error) {
      this.collections.clear();
      for (const [name, docs] of saved) this.collections.set(name, docs);
      throw error;
    }
  }

  private clashes(name: string, document: Document): boolean {
    const documents = this.of(name);
    if (this.find(name, { _id: document._id }).length > 0) return true;
    if (!RECORD_COLLECTIONS.has(name)) return false;
    const { t, o, u } = document;
    return documents.some((other) => other !== document && other.t === t && other.o === o && other.u === u);
  }

  private insert(name: string, documents: Document[]): void {
    for (const [index, document] of documents.entries()) {
      const kept = stored({ _id: document._id ?? new ObjectId(), ...document });
      if (this.clashes(name, kept)) throw duplicateOf(index, documents.length, kept);
      this.of(name).push(kept);
    }
  }

  private update(write: { collection: string; filter: Document; update: Document; upsert: boolean }): void {
    const documents = this.of(write.collection);
    const { matchedCount } = updateOne(documents, write.filter, stored(write.update));
    if (matchedCount === 0 && write.upsert) {
      const created: Document = { _id: stored(write.filter)._id };
      update(created, stored(write.update));
      documents.push(stored(created));
    }
  }

  /** Carries out `writes` as record-write-session.ts does, throwing the error the plan says a failure means. */
  issue(writes: readonly PlannedWrite[]): void {
    for (const write of writes) {
      this.issued.push({ collection: write.collection, kind: write.kind });
      if (write.kind === "insert") {
        try {
          this.insert(write.collection, write.documents);
        } catch (error) {
          throw writeFailure(error, write.clashes);
        }
      } else if (write.kind === "targets") {
        const found = new Query(stored(write.filter)).find(this.of(write.collection), { o: 1, u: 1 }).all();
        const failure = missingTarget(found as Document[], write);
        if (failure) throw failure;
      } else if (write.kind === "probe") {
        const failure = probeFailure(this.find(write.collection, stored(write.filter)), write);
        if (failure) throw failure;
      } else if (write.kind === "updates") {
        for (const one of write.updates) this.update({ collection: write.collection, ...one });
      } else if (write.kind === "delete") {
        const query = new Query(stored(write.filter));
        const kept = this.of(write.collection).filter((document) => !query.test(document));
        this.collections.set(write.collection, kept);
      } else this.update(write);
    }
  }

  /**
   * The record step of an update or a delete (findOneAndUpdate / findOneAndDelete, returning the
   * document as it was, projected): the document as it was, or null when none matched.
   */
  writeRecord(step: RecordStep): Document | null {
    this.issued.push({ collection: step.collection, kind: "record" });
    const documents = this.of(step.collection);
    const query = new Query(stored(step.filter));
    const index = documents.findIndex((document) => query.test(document));
    if (index < 0) return null;
    const before = stored(documents[index] as Document);
    if (step.update === null) documents.splice(index, 1);
    else {
      const changed = stored(before);
      update(changed, stored(step.update));
      if (changed.u !== before.u && this.clashes(step.collection, { ...changed, _id: new ObjectId() }))
        throw writeFailure(duplicateOf(0, 1, changed), [step.clash]);
      documents[index] = stored(changed);
    }
    return (new Query({}).find([before], step.projection).all()[0] as Document | undefined) ?? null;
  }
}
