/**
 * The one gate (`bun run check`, run by `npm test` and CI): typecheck, lint and
 * format check, import-cycle check, dead-code and unused-dependency check (knip,
 * configured in knip.json), then the test suite on each store engine: all of
 * it on SQLite but the files marked PostgreSQL-only, then on PostgreSQL the
 * files that open a store and those so marked (scripts/test-plan.ts), on a
 * private cluster (or TEST_DATABASE_URL's server), and on MongoDB the files
 * that open a store (but those marked for one engine) when MONGODB_TEST_URL
 * names a replica set (none can be started here: without it, the summary says
 * the MongoDB run was skipped and why). Stops at the first failing step;
 * prints each engine's counts and ends with the plain "N passed, N failed"
 * line of the engines run, for CI.
 */
import { existsSync, readFileSync } from "node:fs";
import { Glob } from "bun";
import { MONGODB_SKIPPED, mongodbTestUrl } from "../test/support/mongodb-test-run.ts";
import { planTestRuns, relativeImports } from "./test-plan.ts";

const bin = (name: string) => `node_modules/.bin/${name}`;
const SOURCES = ["api", "dispatcher", "common", "console", "scripts", "test", "bench"];

const steps: { name: string; cmd: string[] }[] = [
  { name: "typecheck", cmd: [bin("tsc"), "-p", "."] },
  // The browser console has a project of its own (DOM types, JSX, no Bun types): console/tsconfig.json.
  { name: "typecheck the browser console", cmd: [bin("tsc"), "-p", "console"] },
  { name: "lint and format", cmd: [bin("biome"), "check", "--error-on-warnings", "."] },
  {
    name: "import cycles",
    cmd: [bin("madge"), "--circular", "--extensions", "ts,tsx", "--ts-config", "tsconfig.json", ...SOURCES],
  },
  // A hint (an ignore or entry in knip.json that is no longer needed) fails too, so the config stays true.
  {
    name: "unused files, exports and dependencies",
    cmd: [bin("knip"), "--no-progress", "--treat-config-hints-as-errors"],
  },
];

for (const step of steps) {
  console.log(`\n== ${step.name}`);
  const proc = Bun.spawn(step.cmd, { stdout: "inherit", stderr: "inherit" });
  if ((await proc.exited) !== 0) {
    console.error(`check: ${step.name} failed`);
    process.exit(1);
  }
}

/** Runs `bun test` with TEST_STORE=`engine` on `files` (all when empty), relaying its output; returns its counts. */
async function runTests(engine: string, files: string[]) {
  console.log(`\n== tests on ${engine}`);
  const started = performance.now();
  // Every test and hook may take 20 s (bun's default is 5 s, and bunfig.toml has no key for it): the
  // first test that asks for a database starts the private cluster, seconds on a busy machine. A
  // test that must be quick says so with its own bound.
  const tests = Bun.spawn([process.execPath, "test", "--timeout", "20000", ...files], {
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, TEST_STORE: engine },
  });
  let output = "";
  const relay = async (stream: ReadableStream<Uint8Array>, sink: NodeJS.WriteStream) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) {
      const text = decoder.decode(chunk, { stream: true });
      output += text;
      sink.write(text);
    }
  };
  await Promise.all([relay(tests.stdout, process.stdout), relay(tests.stderr, process.stderr)]);
  const code = await tests.exited;
  const passed = Number(/^\s*(\d+) pass$/m.exec(output)?.[1] ?? 0);
  const failed = Number(/^\s*(\d+) fail$/m.exec(output)?.[1] ?? 0);
  const seconds = ((performance.now() - started) / 1000).toFixed(0);
  return { engine, passed, failed, ok: code === 0 && passed > 0, seconds };
}

const filters = process.argv.slice(2);
const transpiler = new Bun.Transpiler({ loader: "ts" });
const testFiles = [...new Glob("test/**/*.test.ts").scanSync(".")].sort();
const plan = planTestRuns(testFiles, (file) => {
  // Only TypeScript imports lead on (a JSON file or a stylesheet opens no store).
  if (!/\.tsx?$/.test(file) || !existsSync(file)) return null;
  const text = readFileSync(file, "utf8");
  return {
    text,
    imports: relativeImports(
      file,
      transpiler.scanImports(text).map((entry) => entry.path),
    ),
  };
});
const chosen = (files: string[]) =>
  filters.length === 0 ? files : files.filter((file) => filters.some((filter) => file.includes(filter)));

// Listed, not left to bun's own search, when some files are PostgreSQL-only; a filter is bun's own.
const onSqlite = plan.sqlite.length === testFiles.length ? [] : plan.sqlite.map((file) => `./${file}`);
const runs = [await runTests("sqlite", filters.length > 0 ? filters : onSqlite)];
const onPostgres = chosen(plan.postgres);
if (onPostgres.length > 0)
  runs.push(
    await runTests(
      "postgres",
      onPostgres.map((file) => `./${file}`),
    ),
  );

// The experimental engine, only where a replica set is reachable; said plainly otherwise.
const onMongodb = chosen(plan.mongodb);
if (onMongodb.length > 0 && mongodbTestUrl())
  runs.push(
    await runTests(
      "mongodb",
      onMongodb.map((file) => `./${file}`),
    ),
  );
const mongodbSkipped = onMongodb.length > 0 && !mongodbTestUrl();

console.log("");
for (const run of runs)
  console.log(`${run.engine}: ${run.passed} pass, ${run.failed} fail (${run.seconds} s)`);
if (mongodbSkipped) console.log(`mongodb: ${MONGODB_SKIPPED}`);
const passed = runs.reduce((sum, run) => sum + run.passed, 0);
const failed = runs.reduce((sum, run) => sum + run.failed, 0);
console.log(`${passed} passed, ${failed} failed`);
process.exit(runs.every((run) => run.ok) ? 0 : 1);
