/**
 * The test harness's PostgreSQL (test/support/private-postgres.ts): each caller gets a database of
 * its own on one shared server, dropped on request; a run that started the private cluster leaves
 * no server process and no folder behind.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, rmSync } from "node:fs";
import { dirname } from "node:path";
import type { Subprocess } from "bun";
import { isRunning } from "../../../scripts/private-postgres.ts";
import { createTestDatabase, type TestDatabase } from "../../support/private-postgres.ts";

const opened: TestDatabase[] = [];
afterAll(async () => {
  for (const database of opened) await database.drop();
});

test("each caller gets a database of its own on one server", async () => {
  const [a, b] = [await createTestDatabase("harness a"), await createTestDatabase("harness a")];
  opened.push(a, b);
  expect(a.name).not.toBe(b.name);
  expect(new URL(a.url).host).toBe(new URL(b.url).host);
  await a.sql.unsafe("CREATE TABLE only_here (x int)");
  const seen = async (database: TestDatabase) =>
    (
      (await database.sql.unsafe(
        "SELECT count(*)::int AS n FROM pg_tables WHERE tablename = 'only_here'",
      )) as [{ n: number }]
    )[0].n;
  expect([await seen(a), await seen(b)]).toEqual([1, 0]);
});

test("a dropped database is gone from the server", async () => {
  const database = await createTestDatabase("harness dropped");
  const other = await createTestDatabase("harness other");
  opened.push(other);
  await database.drop();
  const rows = (await other.sql.unsafe("SELECT count(*)::int AS n FROM pg_database WHERE datname = $1", [
    database.name,
  ])) as [{ n: number }];
  expect(rows[0].n).toBe(0);
});

interface Printed {
  data: string;
  pids: number[];
  port: string;
}

/** Runs `bun test` on fixture files as a run of its own; `onPrinted` sees each FIXTURE line as it comes. */
async function runFixtures(
  files: string[],
  onPrinted: (printed: Printed, proc: Subprocess) => void = () => {},
) {
  const proc = Bun.spawn([process.execPath, "test", ...files.map((file) => `${FIXTURES}/${file}`)], {
    cwd: `${import.meta.dir}/../../..`,
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, TEST_DATABASE_URL: "" },
  });
  const printed: Printed[] = [];
  let output = "";
  const read = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    let partial = "";
    for await (const chunk of stream) {
      const text = decoder.decode(chunk, { stream: true });
      output += text;
      const lines = (partial + text).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines.filter((l) => l.startsWith("FIXTURE "))) {
        const server = JSON.parse(line.slice("FIXTURE ".length)) as Printed;
        printed.push(server);
        onPrinted(server, proc);
      }
    }
  };
  const reading = Promise.all([read(proc.stdout), read(proc.stderr)]);
  const code = await proc.exited;
  // A server left running may hold the run's output open: what the run wrote is there by now.
  await Promise.race([reading, Bun.sleep(2000)]);
  return { code, printed, output };
}

const FIXTURES = "./test/store/postgres/fixtures";
/** The server's processes still running and its folder, once the run is over; ended and removed here. */
function leftOver(printed: Printed[]) {
  const running = printed.flatMap((line) => line.pids).filter(isRunning);
  const folders = printed.map((line) => dirname(line.data)).filter((folder) => existsSync(folder));
  for (const pid of running) process.kill(pid, "SIGKILL");
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
  return { running, folders };
}

describe.skipIf(Boolean(process.env.TEST_DATABASE_URL))("the private cluster of a run", () => {
  test("test files of a run share it; the run's end stops it and removes its folder", async () => {
    const { code, printed, output } = await runFixtures(["file-a.ts", "file-b.ts"]);
    expect(code, output).toBe(0);
    expect(printed.length, output).toBe(2);
    const [a, b] = printed as [Printed, Printed];
    expect([b.port, b.data]).toEqual([a.port, a.data]);
    expect(a.pids.length).toBeGreaterThan(1);
    expect(leftOver(printed)).toEqual({ running: [], folders: [] });
    // A child run starting its own cluster: seconds on a busy machine.
  }, 30_000);

  test("a run ended by SIGTERM stops it and removes its folder too", async () => {
    const { code, printed, output } = await runFixtures(["file-killed.ts"], (_, proc) =>
      proc.kill("SIGTERM"),
    );
    expect(printed.length, output).toBe(1);
    expect(code).toBe(143);
    expect(leftOver(printed)).toEqual({ running: [], folders: [] });
  }, 30_000);
});
