/** Taking the store's write lock while another process holds it: the wait is a timer, the process keeps running. */
import type { Database } from "bun:sqlite";
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { beginImmediate } from "../../common/store/sqlite/sqlite-write-lock.ts";
import { openWalFile, type WalFile } from "../support/wal-file.ts";

describe("beginImmediate", () => {
  let file: WalFile;
  let holder: Database;
  let waiter: Database;
  beforeEach(() => {
    file = openWalFile("tds-write-lock-");
    ({ first: holder, second: waiter } = file);
  });
  afterEach(() => file.remove());

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

  test("every try leaves the wait to the timer, however often the lock is taken: SQLite never sleeps on the thread", async () => {
    holder.run("BEGIN IMMEDIATE");
    // SQLite applies a busy_timeout as it compiles the PRAGMA: a statement kept and run again may
    // leave the timeout the previous try restored, and the next BEGIN then sleeps inside SQLite.
    for (let round = 0; round < 5; round++) {
      let ticks = 0;
      const ticker = setInterval(() => ticks++, 2);
      const started = Date.now();
      const error = await beginImmediate(waiter, 40).catch((e) => e);
      clearInterval(ticker);
      expect((error as { code: string }).code).toBe("SQLITE_BUSY");
      // Asleep in SQLite, one BEGIN would take the whole 40 ms at once and the ticker would miss them.
      expect(Date.now() - started).toBeLessThan(150);
      expect(ticks).toBeGreaterThan(5);
    }
    holder.run("COMMIT");
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
