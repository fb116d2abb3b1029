/** Taking the store's write lock while another process holds it: the wait is a timer, the process keeps running. */
import { Database } from "bun:sqlite";
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beginImmediate } from "../../common/sqlite-write-lock.ts";

describe("beginImmediate", () => {
  let dir: string;
  let holder: Database;
  let waiter: Database;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "tds-write-lock-"));
    holder = new Database(join(dir, "s.sqlite"), { create: true });
    holder.run("PRAGMA journal_mode = WAL");
    holder.run("CREATE TABLE t (x)");
    waiter = new Database(join(dir, "s.sqlite"));
  });
  afterEach(() => {
    holder.close();
    waiter.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("waits for the other connection's lock without stopping the event loop", async () => {
    holder.run("BEGIN IMMEDIATE");
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 5);
    const taken = beginImmediate(waiter, 5000);
    await Bun.sleep(100);
    holder.run("COMMIT");
    await taken;
    clearInterval(ticker);
    expect(waiter.inTransaction).toBe(true);
    waiter.run("INSERT INTO t VALUES (1)");
    waiter.run("COMMIT");
    expect(ticks).toBeGreaterThan(5);
    // The ordinary busy_timeout is back for the statements that follow.
    expect(waiter.query<{ timeout: number }, []>("PRAGMA busy_timeout").get()?.timeout).toBe(5000);
  });

  test("gives up with SQLITE_BUSY once the wait is over", async () => {
    holder.run("BEGIN IMMEDIATE");
    const started = Date.now();
    const error = await beginImmediate(waiter, 60).catch((e) => e);
    expect((error as { code: string }).code).toBe("SQLITE_BUSY");
    expect(Date.now() - started).toBeGreaterThanOrEqual(55);
    expect(waiter.inTransaction).toBe(false);
    holder.run("COMMIT");
  });
});
