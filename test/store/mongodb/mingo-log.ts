/**
 * The delivery log's collections in memory, for the tests of its pure plans
 * (common/delivery-log/mongodb/): no MongoDB server can run on this machine,
 * so the reads and writes the plans decide are run by mingo, an independent
 * interpreter of MongoDB's query and update language, over arrays of
 * documents of the engine's shape, each passed through the driver's BSON
 * serializer and back (what a server would store and return).
 *
 * What is modelled here, not by mingo: the unique indexes (`_id` of both
 * collections, `delivery_event` of deliveries: an insert that would break one
 * throws, as the server's duplicate-key error does) and an upsert that
 * inserts (the filter's equalities plus `$setOnInsert`, as the server builds
 * the document). What nothing here proves: the server's use of the indexes,
 * transactions, write conflicts between concurrent writers, BSON's
 * comparison of strings by UTF-8 bytes (mingo compares UTF-16 code units:
 * the same order for the ASCII ids used here).
 */
import { find, Query, updateMany, updateOne } from "mingo";
import { BSON, type Document } from "mongodb";
import type {
  FindPlan,
  LogCollection,
  LogWrite,
} from "../../../common/delivery-log/mongodb/log-operations.ts";

/** A document as a server returns it: through BSON and back. */
export const stored = <T extends Document>(document: T): T => BSON.deserialize(BSON.serialize(document)) as T;

/** The unique keys of a collection's documents (besides `_id`), as text. */
const UNIQUE: Record<LogCollection, ((document: Document) => string)[]> = {
  deliveries: [(d) => JSON.stringify([d.t, d.webhookId, d.eventId, d.part])],
  attempts: [],
};

export class MingoLog {
  readonly collections: Record<LogCollection, Document[]> = { deliveries: [], attempts: [] };

  /** What `plan` reads from `collection`. */
  find<T = Document>(collection: LogCollection, plan: FindPlan | null): T[] {
    if (plan === null) return [];
    let cursor = find(this.collections[collection], plan.filter, plan.projection);
    if (plan.sort) cursor = cursor.sort(plan.sort);
    if (plan.limit !== undefined) cursor = cursor.limit(plan.limit);
    return cursor.all() as T[];
  }

  /** The first document `filter` matches, or null. */
  findOne<T = Document>(collection: LogCollection, filter: Document): T | null {
    return (this.find<T>(collection, { filter, limit: 1 })[0] ?? null) as T | null;
  }

  /** Runs `writes` in order, as the shell sends them. @throws Error for a duplicate key. */
  apply(writes: readonly (LogWrite | null)[]): void {
    for (const write of writes) {
      if (write === null) continue;
      const documents = this.collections[write.collection];
      switch (write.kind) {
        case "insert":
          for (const document of write.documents) this.insert(write.collection, document);
          break;
        case "insertIfAbsent":
          for (const entry of write.entries)
            if (!documents.some((d) => new Query(entry.filter).test(d)))
              this.insert(write.collection, { ...entry.filter, ...entry.onInsert });
          break;
        case "update":
          if (write.many) updateMany(documents, write.filter, write.update);
          else updateOne(documents, write.filter, write.update);
          this.collections[write.collection] = documents.map(stored);
          break;
        case "delete": {
          const query = new Query(write.filter);
          this.collections[write.collection] = documents.filter((d) => !query.test(d));
          break;
        }
      }
    }
  }

  private insert(collection: LogCollection, document: Document): void {
    const documents = this.collections[collection];
    const keys = [(d: Document) => JSON.stringify(d._id), ...UNIQUE[collection]];
    for (const key of keys)
      if (documents.some((d) => key(d) === key(document)))
        throw new Error(`E11000 duplicate key in ${collection}: ${key(document)}`);
    documents.push(stored(document));
  }
}
