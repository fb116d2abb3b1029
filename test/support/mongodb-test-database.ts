/**
 * A MongoDB database of its own per test, on the replica set MONGODB_TEST_URL
 * names (mongodb-test-run.ts): its URL, and what drops it. Used only when
 * that variable is set; nothing here starts a server.
 */
import { MongoClient } from "mongodb";

let created = 0;

/** `url` with its database (the path) replaced by `database`, options kept. */
function withDatabase(url: string, database: string): string {
  const match = /^(mongodb(?:\+srv)?:\/\/[^/?]*)(?:\/[^?]*)?(\?.*)?$/.exec(url);
  if (!match) throw new Error(`MONGODB_TEST_URL: not a mongodb:// or mongodb+srv:// URL: ${url}`);
  return `${match[1]}/${database}${match[2] ?? ""}`;
}

/** A fresh database named after `label` on the server of `serverUrl`. */
export function createTestMongoDatabase(serverUrl: string, label: string) {
  const name = `tds_${label}_${process.pid}_${++created}_${Date.now().toString(36)}`;
  const url = withDatabase(serverUrl, name);
  return {
    name,
    url,
    /** Drops the database (every handle on it closed by then). */
    async drop(): Promise<void> {
      const client = new MongoClient(url, { serverSelectionTimeoutMS: 10_000 });
      try {
        await client.db(name).dropDatabase();
      } finally {
        await client.close();
      }
    },
  };
}
