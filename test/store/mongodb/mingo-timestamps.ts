/**
 * BSON Timestamps for mingo. mingo orders a value of a class it does not
 * know (the driver's Timestamp, a Long) by its `toString()`, the decimal
 * number, as text: Timestamp(50, 1) sorts before Timestamp(20, 1) there,
 * where a server compares the seconds, then the increment. So the outbox's
 * documents and the engine's filters and pipelines over them are run by mingo
 * with every Timestamp written as fixed-width text of its seconds and
 * increment (two 10-digit numbers: text order is the server's order), and
 * read back as Timestamps. Nothing else is touched; the engine's documents
 * are passed as the engine builds them.
 */
import { Aggregator } from "mingo";
import { type Document, ObjectId, Timestamp } from "mongodb";
import { MingoCollection } from "./mingo-collection.ts";

const PREFIX = "\u0000ts:";
const digits = (n: number) => String(n).padStart(10, "0");

/** `value` with every Timestamp in it as text that orders as the server orders Timestamps. */
function timestampsAsText<T>(value: T): T {
  if (value instanceof Timestamp)
    return `${PREFIX}${digits(value.high >>> 0)}.${digits(value.low >>> 0)}` as T;
  if (value instanceof ObjectId || value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map(timestampsAsText) as T;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, timestampsAsText(v)])) as T;
}

/** The documents mingo answered with, their Timestamps as Timestamps again. */
function textAsTimestamps<T>(value: T): T {
  if (typeof value === "string" && value.startsWith(PREFIX)) {
    const [t, i] = value.slice(PREFIX.length).split(".").map(Number);
    return new Timestamp({ t: t ?? 0, i: i ?? 0 }) as T;
  }
  if (value instanceof ObjectId || value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map(textAsTimestamps) as T;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, textAsTimestamps(v)])) as T;
}

/** A mingo collection (mingo-collection.ts) whose documents, filters, updates and pipelines may hold Timestamps. */
export class TimestampedCollection {
  private readonly inner: MingoCollection;

  constructor(initial: readonly Document[] = []) {
    this.inner = new MingoCollection(initial.map(timestampsAsText));
  }

  insertOne(doc: Document): void {
    this.inner.insertOne(timestampsAsText(doc));
  }

  find(filter: Document, options: { sort?: Document } = {}): Document[] {
    return textAsTimestamps(this.inner.find(timestampsAsText(filter), options));
  }

  updateOne(filter: Document, update: Document): { matchedCount: number } {
    return this.inner.updateOne(timestampsAsText(filter), timestampsAsText(update));
  }

  deleteOne(filter: Document): { deletedCount: number } {
    return this.inner.deleteOne(timestampsAsText(filter));
  }

  aggregate(pipeline: Document[]): Document[] {
    return textAsTimestamps(new Aggregator(timestampsAsText(pipeline)).run(this.inner.all()) as Document[]);
  }

  all(): Document[] {
    return textAsTimestamps(this.inner.all());
  }
}
