/**
 * The change-log members of the MongoDB store (api/store/mongodb/change-log-session.ts) where they
 * can be held to something without a server (none can run on this machine): a store on a client
 * that never connects. A partition the log does not have is refused by every read as the port's
 * other failures are, a rejected promise (the conformance suite awaits `.rejects`), before any
 * call reaches for the server. What the members read and write is readers-passed.test.ts's,
 * prune-plan.test.ts's and change-log-replay.test.ts's.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { MongoClient } from "mongodb";
import { createMongoStore } from "../../../api/store/mongodb/mongodb-store.ts";

// A loopback port nothing listens on: the client is never connected.
const URL = "mongodb://127.0.0.1:9/tds";
const client = new MongoClient(URL, { serverSelectionTimeoutMS: 100 });
const store = createMongoStore(
  { engine: "mongodb", url: URL, client, db: client.db("tds") },
  { attempts: 2 },
);
afterAll(() => client.close());

describe("the MongoDB change log without a server", () => {
  for (const p of [-1, 1, 1.5])
    test(`partition ${p}: refused by every read as a rejected promise, naming the one partition`, async () => {
      const refused = "the MongoDB store's change log has one partition";
      let read: Promise<unknown> | null = null;
      expect(() => {
        read = store.readChanges(p, null, 10);
      }).not.toThrow();
      await expect(read as unknown as Promise<unknown>).rejects.toThrow(refused);
      await expect(store.changeLogLag(p, null)).rejects.toThrow(refused);
      await expect(store.feedPosition("main", p)).rejects.toThrow(refused);
      await expect(store.passedByAllReaders(p)).rejects.toThrow(refused);
    });
});
