/**
 * Which test files run on which engine (scripts/test-plan.ts), over a small made-up tree: the
 * files that reach the store factory or the process harness run on every engine, the pure ones
 * once, the marked ones as marked.
 */
import { expect, test } from "bun:test";
import { planTestRuns, type SourceFile } from "../../scripts/test-plan.ts";

const tree: Record<string, SourceFile> = {
  "test/pure.test.ts": { text: "", imports: ["api/eql/parse.ts"] },
  "test/store.test.ts": { text: "", imports: ["test/support/app.ts"] },
  "test/support/app.ts": { text: "", imports: ["common/store/open-engine.ts"] },
  "test/flows/steady.test.ts": { text: "", imports: ["test/support/service-processes.ts"] },
  "test/sqlite-only.test.ts": {
    text: "// @test-engines sqlite: it reads the SQLite file",
    imports: ["test/support/app.ts"],
  },
  "test/by-path.test.ts": { text: "// @test-engines all: it starts the processes by path", imports: [] },
  "test/flows/scale-out.test.ts": {
    text: "// @test-engines postgres: several processes share one store",
    imports: ["test/support/service-processes.ts"],
  },
  "api/eql/parse.ts": { text: "", imports: [] },
};
const tests = Object.keys(tree).filter((file) => file.endsWith(".test.ts"));

test("each engine's list", () => {
  const plan = planTestRuns(tests, (file) => tree[file] ?? null);
  expect(plan.sqlite).toEqual([
    "test/pure.test.ts",
    "test/store.test.ts",
    "test/flows/steady.test.ts",
    "test/sqlite-only.test.ts",
    "test/by-path.test.ts",
  ]);
  expect(plan.postgres).toEqual([
    "test/store.test.ts",
    "test/flows/steady.test.ts",
    "test/by-path.test.ts",
    "test/flows/scale-out.test.ts",
  ]);
  expect(plan.mongodb).toEqual(["test/store.test.ts", "test/flows/steady.test.ts", "test/by-path.test.ts"]);
});
