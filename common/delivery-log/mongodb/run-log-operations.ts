/**
 * The delivery log's driver shell: the reads and writes the plans decided
 * (log-operations.ts) sent to the driver as they are, each with the
 * transaction's session when there is one (what makes the writes of one
 * transaction atomic, and its reads one snapshot). Nothing is decided here.
 */
import type { AnyBulkWriteOperation, ClientSession, Collection, Db, Document } from "mongodb";
import { COLLECTION } from "../../store/mongodb/layout.ts";
import type { FindPlan, LogCollection, LogWrite } from "./log-operations.ts";

/** The delivery log's collections on one database. */
export type LogCollections = Readonly<Record<LogCollection, Collection<Document>>>;

/** The delivery log's collections on `db`. */
export function logCollections(db: Db): LogCollections {
  return {
    deliveries: db.collection(COLLECTION.deliveries),
    attempts: db.collection(COLLECTION.deliveryAttempts),
  };
}

/** The session option of every call: the transaction's, or none outside one. */
const inSession = (session: ClientSession | null) => (session ? { session } : {});

/** The documents `plan` reads from `collection` (typed by the caller: the plans know the shape they read). */
export async function findAll<T>(
  collection: Collection<Document>,
  plan: FindPlan,
  session: ClientSession | null,
): Promise<T[]> {
  const options = {
    ...inSession(session),
    ...(plan.sort ? { sort: plan.sort } : {}),
    ...(plan.limit !== undefined ? { limit: plan.limit } : {}),
    ...(plan.projection ? { projection: plan.projection } : {}),
  };
  return (await collection.find(plan.filter, options).toArray()) as T[];
}

/** The one document `filter` matches in `collection` (with the projection's fields), or null. */
export async function findOne<T>(
  collection: Collection<Document>,
  filter: Document,
  projection: Record<string, 1> | null,
  session: ClientSession | null,
): Promise<T | null> {
  const options = { ...inSession(session), ...(projection ? { projection } : {}) };
  return (await collection.findOne(filter, options)) as T | null;
}

/** Runs `writes` in order on `collections`, each with `session`. */
export async function applyWrites(
  collections: LogCollections,
  writes: readonly LogWrite[],
  session: ClientSession | null,
): Promise<void> {
  const options = inSession(session);
  for (const write of writes) {
    const collection = collections[write.collection];
    switch (write.kind) {
      case "insert":
        await collection.insertMany(write.documents, options);
        break;
      case "insertIfAbsent": {
        const operations: AnyBulkWriteOperation<Document>[] = write.entries.map((entry) => ({
          updateOne: { filter: entry.filter, update: { $setOnInsert: entry.onInsert }, upsert: true },
        }));
        await collection.bulkWrite(operations, { ...options, ordered: true });
        break;
      }
      case "update":
        if (write.many) await collection.updateMany(write.filter, write.update, options);
        else await collection.updateOne(write.filter, write.update, options);
        break;
      case "delete":
        await collection.deleteMany(write.filter, options);
        break;
    }
  }
}
