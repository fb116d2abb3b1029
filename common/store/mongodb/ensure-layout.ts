/**
 * Creates the collections and indexes layout.ts describes, through the
 * driver: what is there already is left as it is, so every process can run it
 * at start and several can run it at once. It is the engine's only DDL, and
 * it runs before any request: nothing is created while the service runs.
 */
import type { Db } from "mongodb";
import { LAYOUT } from "./layout.ts";

/** The server's code for "the collection exists already" (another process created it first). */
const NAMESPACE_EXISTS = 48;

/**
 * Creates every collection of LAYOUT that `db` lacks and every index (by name; an index there
 * already with the same keys and options is no error), with `db`'s write concern (majority:
 * mongodb-engine.ts).
 * @throws the driver's error when an index of the same name differs (a layout of another
 * version), or the server refuses.
 */
export async function ensureLayout(db: Db): Promise<void> {
  const listed = await db.listCollections({}, { nameOnly: true }).toArray();
  const existing = new Set(listed.map((collection) => collection.name));
  for (const collection of LAYOUT) {
    if (!existing.has(collection.name))
      await db.createCollection(collection.name, { writeConcern: { w: "majority" } }).catch((error) => {
        if ((error as { code?: unknown }).code !== NAMESPACE_EXISTS) throw error;
      });
    if (collection.indexes.length === 0) continue;
    await db.collection(collection.name).createIndexes(
      collection.indexes.map((index) => ({
        name: index.name,
        key: { ...index.keys },
        ...(index.unique ? { unique: true } : {}),
      })),
    );
  }
}
