/** The house rules of ARCHITECTURE.md that a grep can hold: who may import whom, and who may import drivers. */
import { describe, expect, test } from "bun:test";
import { Glob } from "bun";

const root = `${import.meta.dir}/..`;
const sources = [...new Glob("{api,dispatcher,common}/**/*.ts").scanSync(root)];
const importsOf = async (file: string) =>
  [
    ...(await Bun.file(`${root}/${file}`).text()).matchAll(
      /^(?:import|export)\s+(?:[^;]*?\s+from\s+)?"([^"]+)"/gms,
    ),
  ].map((m) => m[1] ?? "");

describe("architecture", () => {
  test("api/ and dispatcher/ never import each other; common/ imports neither", async () => {
    const offences: string[] = [];
    for (const file of sources) {
      const forbidden = file.startsWith("api/")
        ? "/dispatcher/"
        : file.startsWith("dispatcher/")
          ? "/api/"
          : /\/(api|dispatcher)\//;
      for (const spec of await importsOf(file)) {
        const resolved = `/${file.split("/").slice(0, -1).join("/")}/${spec}`;
        if (spec.startsWith(".") && new URL(resolved, "file:///").pathname.match(forbidden))
          offences.push(`${file} → ${spec}`);
      }
    }
    expect(offences).toEqual([]);
  });

  test("only store adapter files import database drivers", async () => {
    const offences: string[] = [];
    for (const file of sources) {
      for (const spec of await importsOf(file)) {
        const sqliteAdapter =
          file.startsWith("api/store/sqlite/") || file.startsWith("dispatcher/store/sqlite/");
        if (spec === "bun:sqlite" && !sqliteAdapter) offences.push(`${file} → ${spec}`);
        if (spec === "mongodb" && !file.startsWith("api/store/mongodb/")) offences.push(`${file} → ${spec}`);
      }
    }
    expect(offences).toEqual([]);
  });

  test("no folder barrels (index.ts)", () => {
    expect(sources.filter((file) => file.endsWith("/index.ts"))).toEqual([]);
  });
});
