/**
 * One collection of the MongoDB engine in memory, for the pure filters,
 * updates and sorts of the sessions: mingo (an independent interpreter of
 * MongoDB's query language) runs them over documents that went through the
 * driver's own BSON serializer on the way in and out, as a server's would.
 * No MongoDB server can run where these tests run, so mingo stands in for
 * one; it proves what a filter or update does to documents, not indexes,
 * unique keys, collations other than code-unit order, transactions or
 * concurrency (the conformance suite does, on a server: MONGODB_TEST_URL).
 *
 * Upserts are interpreted here, as the server documents them (mingo has
 * none): no match inserts the filter's equalities, then the update with
 * `$setOnInsert` applied as `$set`; an `_id` the filter does not give is an
 * ObjectId.
 */
import { find, Query, updateOne } from "mingo";
import { BSON, type Document, ObjectId } from "mongodb";

/**
 * What the driver stores and reads back: a document through BSON both ways, with the driver's
 * default of `ignoreUndefined: false` (an undefined value is stored as null; BSON.serialize alone
 * would leave it out), which the engine's client keeps.
 */
export const throughBson = <T extends Document>(doc: T): T =>
  BSON.deserialize(BSON.serialize(doc, { ignoreUndefined: false })) as T;

const isOperatorObject = (value: unknown) =>
  value !== null &&
  typeof value === "object" &&
  !Array.isArray(value) &&
  Object.keys(value).some((key) => key.startsWith("$"));

/** The filter's top-level equalities (what an upsert seeds the new document with). */
const equalitiesOf = (filter: Document): Document =>
  Object.fromEntries(
    Object.entries(filter).filter(([key, value]) => !key.startsWith("$") && !isOperatorObject(value)),
  );

export class MingoCollection {
  private docs: Document[] = [];

  constructor(initial: readonly Document[] = []) {
    for (const doc of initial) this.insertOne(doc);
  }

  insertOne(doc: Document): void {
    this.docs.push(throughBson(doc));
  }

  /** The matching documents, read back through BSON, in `sort` order when given. */
  find(filter: Document, options: { sort?: Document; projection?: Document } = {}): Document[] {
    let cursor = find(this.docs, filter, options.projection);
    if (options.sort) cursor = cursor.sort(options.sort);
    return cursor.all().map((doc) => throughBson(doc as Document));
  }

  findOne(filter: Document, options: { projection?: Document } = {}): Document | null {
    return this.find(filter, options)[0] ?? null;
  }

  updateOne(
    filter: Document,
    update: Document,
    options: { upsert?: boolean } = {},
  ): { matchedCount: number; upsertedCount: number } {
    const { $setOnInsert, ...rest } = update;
    const result = updateOne(this.docs, filter, rest);
    if (result.matchedCount > 0 || !options.upsert) {
      this.docs = this.docs.map((doc) => throughBson(doc));
      return { matchedCount: result.matchedCount, upsertedCount: 0 };
    }
    const seeded = { _id: new ObjectId(), ...structuredClone(equalitiesOf(filter)) };
    const onInsert = $setOnInsert ? { ...rest, $set: { ...(rest.$set ?? {}), ...$setOnInsert } } : rest;
    updateOne([seeded], {}, onInsert);
    this.insertOne(seeded);
    return { matchedCount: 0, upsertedCount: 1 };
  }

  deleteOne(filter: Document): { deletedCount: number } {
    const query = new Query(filter);
    const index = this.docs.findIndex((doc) => query.test(doc));
    if (index < 0) return { deletedCount: 0 };
    this.docs.splice(index, 1);
    return { deletedCount: 1 };
  }

  all(): Document[] {
    return this.docs.map((doc) => throughBson(doc));
  }
}
