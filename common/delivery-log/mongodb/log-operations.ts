/**
 * What the delivery log's members send to MongoDB, as values: a read (filter,
 * order, limit, fields) or a list of writes, decided by pure functions
 * (delivery-log-plans.ts, attempt-plans.ts) and run by one thin shell
 * (run-log-operations.ts), which passes each to the driver as it is. The tests
 * run the same values with mingo where no server can run.
 */
import type { Document } from "mongodb";

/** The delivery log's collections (layout.ts: deliveries, delivery_attempts), as an operation names them. */
export type LogCollection = "deliveries" | "attempts";

/** One read: the documents matching `filter`, in `sort` order, at most `limit`, with the `projection`'s fields. */
export interface FindPlan {
  filter: Document;
  sort?: Record<string, 1 | -1>;
  limit?: number;
  projection?: Record<string, 1>;
}

/** One upsert that writes only when nothing matches: `filter` (equalities only) and the rest of the document. */
export interface InsertIfAbsent {
  filter: Document;
  onInsert: Document;
}

/** One write, or one batch of writes of one kind, to one collection. */
export type LogWrite =
  | { kind: "insert"; collection: LogCollection; documents: Document[] }
  /** Each entry inserted unless a document matches its filter (then nothing is written for it). */
  | { kind: "insertIfAbsent"; collection: LogCollection; entries: InsertIfAbsent[] }
  | { kind: "update"; collection: LogCollection; filter: Document; update: Document; many: boolean }
  | { kind: "delete"; collection: LogCollection; filter: Document };
