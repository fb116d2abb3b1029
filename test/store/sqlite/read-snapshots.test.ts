/** One read snapshot per turn of the event loop: shared while it may be, fresh whenever it must be. */
import { Database } from "bun:sqlite";
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { createReadSnapshots, type ReadSnapshots } from "../../../api/store/sqlite/read-snapshots.ts";
import { openWalFile, type WalFile } from "../../support/wal-file.ts";

const nextTurn = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("read snapshots", () => {
  let file: WalFile;
  let reader: Database;
  let otherProcess: Database;
  let snapshots: ReadSnapshots;
  const count = () => {
    snapshots.enter();
    return reader.query<{ n: number }, []>("SELECT count(*) AS n FROM t").get()?.n;
  };
  const commitElsewhere = () => otherProcess.run("INSERT INTO t VALUES (1)");

  beforeEach(() => {
    file = openWalFile("tds-read-snapshot-");
    ({ first: otherProcess, second: reader } = file);
    snapshots = createReadSnapshots(reader);
  });
  afterEach(() => {
    snapshots.drop();
    file.remove();
  });

  test("the reads of one turn share a snapshot; the next turn reads afresh", async () => {
    expect(count()).toBe(0);
    commitElsewhere();
    expect(count()).toBe(0);
    expect(reader.inTransaction).toBe(true);
    await nextTurn();
    expect(reader.inTransaction).toBe(false);
    expect(count()).toBe(1);
  });

  test("the first request of a turn drops a snapshot opened before it; later ones of the turn share its new one", () => {
    expect(count()).toBe(0);
    commitElsewhere();
    snapshots.arrived();
    expect(count()).toBe(1);
    commitElsewhere();
    snapshots.arrived();
    expect(count()).toBe(1);
  });

  test("dropping it (as before a commit of our own) makes the next read fresh", () => {
    expect(count()).toBe(0);
    commitElsewhere();
    snapshots.drop();
    expect(count()).toBe(1);
  });

  test("a closed connection at the turn's end is no crash", async () => {
    expect(count()).toBe(0);
    reader.close();
    await nextTurn();
    reader = file.second = new Database(file.path);
    snapshots = createReadSnapshots(reader);
    expect(count()).toBe(0);
  });
});

/**
 * The freshness argument rests on this property of Bun's event loop: what
 * `setImmediate` schedules while a request is handled runs before anything
 * that arrives in a later poll — here, the client's next request, sent only
 * once the answer to the previous one is in.
 */
test("an immediate scheduled while a request is handled runs before the client's next request", async () => {
  const awaiting = new Map<string, boolean>();
  let late = 0;
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const client = request.headers.get("x-client") ?? "";
      if (awaiting.get(client)) late++;
      awaiting.set(client, true);
      setImmediate(() => awaiting.set(client, false));
      await request.text();
      return new Response("ok");
    },
  });
  try {
    const url = `http://127.0.0.1:${server.port}/`;
    await Promise.all(
      Array.from({ length: 16 }, async (_, client) => {
        for (let i = 0; i < 100; i++) {
          const init = { method: "POST", body: "x", headers: { "x-client": String(client) } };
          await (await fetch(url, init)).text();
        }
      }),
    );
    expect(awaiting.size).toBe(16);
    expect(late).toBe(0);
  } finally {
    server.stop(true);
  }
});
