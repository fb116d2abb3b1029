/**
 * The house rules of docs/ARCHITECTURE.md that a grep can hold: the layers (read from that document's
 * tables, so the document and the check cannot drift apart), who may import whom, who may import drivers.
 */
import { describe, expect, test } from "bun:test";
import { Glob } from "bun";

const root = `${import.meta.dir}/..`;
const sources = [...new Glob("{api,dispatcher,common,console}/**/*.{ts,tsx}").scanSync(root)];
const importsOf = async (file: string) =>
  [
    ...(await Bun.file(`${root}/${file}`).text()).matchAll(
      /^(?:import|export)\s+(?:[^;]*?\s+from\s+)?"([^"]+)"/gms,
    ),
  ].map((m) => m[1] ?? "");
/** The repository path a relative import of `file` names (`api/feed/x.ts` + `../eql/y.ts` → `api/eql/y.ts`). */
const resolveImport = (file: string, spec: string) => new URL(spec, `file:///${file}`).pathname.slice(1);

/** The rows (cells, trimmed) of the first Markdown table after `heading` in docs/ARCHITECTURE.md. */
const doc = await Bun.file(`${root}/docs/ARCHITECTURE.md`).text();
function tableAfter(heading: string): string[][] {
  const start = doc.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`docs/ARCHITECTURE.md has no "${heading}" section`);
  const lines = doc.slice(start + heading.length + 2).split("\n");
  const first = lines.findIndex((line) => line.startsWith("|") || line.startsWith("## "));
  if (first < 0 || !lines[first]?.startsWith("|")) return [];
  const rows: string[][] = [];
  for (const line of lines.slice(first + 2)) {
    if (!line.startsWith("|")) break;
    rows.push(
      line
        .slice(1, -1)
        .split("|")
        .map((cell) => cell.trim()),
    );
  }
  return rows;
}
const pathsIn = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? "");

/** Layers top (entry points, rank 0) to bottom (shared); each place is a folder (`api/feed/`) or a file. */
const layers = tableAfter("## Layers").map(([name = "", places = ""], rank) => ({
  name,
  rank,
  places: pathsIn(places),
}));
const places = layers.flatMap((layer) => layer.places.map((place) => ({ place, layer })));
/** The most specific place holding `file` (`dispatcher/main.ts` before `dispatcher/`). */
const placeOf = (file: string) =>
  places
    .filter(({ place }) => (place.endsWith("/") ? file.startsWith(place) : file === place))
    .sort((a, b) => b.place.length - a.place.length)[0];
/** "from → to" between places, each named with its reason in the document. */
const allowedUpward = tableAfter("## Upward imports allowed").map(
  ([from = "", to = ""]) => `${pathsIn(from)[0]} → ${pathsIn(to)[0]}`,
);

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

  test("console/ (browser code) imports no file outside console/: it reaches the server over HTTP only", async () => {
    const offences: string[] = [];
    for (const file of sources.filter((source) => source.startsWith("console/"))) {
      for (const spec of await importsOf(file)) {
        if (spec.startsWith(".") && !resolveImport(file, spec).startsWith("console/"))
          offences.push(`${file} → ${spec}`);
      }
    }
    expect(sources.some((file) => file.startsWith("console/"))).toBe(true);
    expect(offences).toEqual([]);
  });

  test("only store engine files import database drivers", async () => {
    // The SQLite engine: the API's full store, what both processes share (connection, migrations, webhook
    // rows), and the delivery log both write (the API's members and the dispatcher's port).
    const sqliteEngine = ["api/store/sqlite/", "common/store/sqlite/", "common/delivery-log/sqlite/"];
    // The MongoDB engine: the API's full store, what every process opens (client, checks, layout), and the
    // delivery log both write.
    const mongodbEngine = ["api/store/mongodb/", "common/store/mongodb/", "common/delivery-log/mongodb/"];
    const offences: string[] = [];
    for (const file of sources) {
      for (const spec of await importsOf(file)) {
        const inSqliteEngine = sqliteEngine.some((folder) => file.startsWith(folder));
        if (spec === "bun:sqlite" && !inSqliteEngine) offences.push(`${file} → ${spec}`);
        if (spec === "mongodb" && !mongodbEngine.some((folder) => file.startsWith(folder)))
          offences.push(`${file} → ${spec}`);
      }
    }
    expect(offences).toEqual([]);
  });

  test("only the PostgreSQL engine (and the scripts, test and bench support around it) uses Bun's SQL client", async () => {
    // Bun's SQL client is a driver like any other, though reachable without an import too (on the Bun global).
    // The engine's shared parts (its client and migrations; the delivery log) go where SQLite's are, in common/.
    const engine = ["api/store/postgres/", "common/store/postgres/", "common/delivery-log/postgres/"];
    const allowed = [...engine, "scripts/private-postgres.ts", "test/support/", "bench/"];
    const everything = [...new Glob("{api,dispatcher,common,scripts,test,bench}/**/*.ts").scanSync(root)];
    const offences: string[] = [];
    for (const file of everything) {
      if (allowed.some((place) => (place.endsWith("/") ? file.startsWith(place) : file === place))) continue;
      const text = await Bun.file(`${root}/${file}`).text();
      const named = [...text.matchAll(/^import\s+(?:type\s+)?\{([^}]*)\}\s+from\s+"bun"/gm)].some((m) =>
        /\b(SQL|sql)\b/.test(m[1] ?? ""),
      );
      if (named || /\bBun\.(SQL|sql)\b/.test(text) || /^import\s+\*\s+as\s+\w+\s+from\s+"bun"/m.test(text))
        offences.push(file);
    }
    expect(offences).toEqual([]);
  });

  test("the layer table places every source file, and each place in one layer only", () => {
    expect(layers.length).toBeGreaterThanOrEqual(6);
    expect(sources.filter((file) => !placeOf(file))).toEqual([]);
    const listed = places.map(({ place }) => place);
    expect(listed.filter((place, i) => listed.indexOf(place) !== i)).toEqual([]);
  });

  test("no file imports from a layer above its own, except the upward imports the document names", async () => {
    const offences: string[] = [];
    const seen = new Set<string>();
    for (const file of sources) {
      const from = placeOf(file);
      for (const spec of await importsOf(file)) {
        if (!spec.startsWith(".") || !from) continue;
        const target = resolveImport(file, spec);
        const to = placeOf(target);
        if (!to || to.layer.rank >= from.layer.rank) continue;
        const edge = `${from.place} → ${to.place}`;
        seen.add(edge);
        if (!allowedUpward.includes(edge))
          offences.push(`${file} (${from.layer.name}) → ${target} (${to.layer.name})`);
      }
    }
    expect(offences).toEqual([]);
    // An exception that no longer occurs is stale: the document would excuse a future one unseen.
    expect(allowedUpward.filter((edge) => !seen.has(edge))).toEqual([]);
  });

  test("the tables both processes use have one owner: the delivery log's, and the webhook set version's writes", async () => {
    // The engine's migrations define every table; besides them, only the owner's files name it in SQL:
    // each engine's delivery log in common/delivery-log/<engine>/, used by both processes.
    const deliveryLog = ["common/delivery-log/sqlite/", "common/delivery-log/postgres/"];
    const owners: Record<string, { pattern: RegExp; owners: string[] }> = {
      deliveries: { pattern: /\b(FROM|INTO|UPDATE|JOIN)\s+deliveries\b/i, owners: deliveryLog },
      delivery_attempts: { pattern: /\b(FROM|INTO|UPDATE|JOIN)\s+delivery_attempts\b/i, owners: deliveryLog },
      // On MongoDB the layout names the collections, and the engine's delivery log alone uses them.
      "deliveries and delivery_attempts (MongoDB)": {
        pattern: /\bCOLLECTION\.(deliveries|deliveryAttempts)\b/,
        owners: ["common/delivery-log/mongodb/", "common/store/mongodb/layout.ts"],
      },
      webhook_set_versions: {
        pattern: /\b(INTO|UPDATE)\s+webhook_set_versions\b/i,
        owners: [
          "common/store/sqlite/webhook-rows.ts",
          "api/store/postgres/webhook-session.ts",
          "common/delivery-log/postgres/postgres-delivery-store.ts",
        ],
      },
    };
    const migrations = ["common/store/sqlite/migrations.ts", "common/store/postgres/migrations.ts"];
    const offences: string[] = [];
    for (const file of sources) {
      if (migrations.includes(file)) continue;
      const text = await Bun.file(`${root}/${file}`).text();
      for (const [table, { pattern, owners: allowed }] of Object.entries(owners)) {
        if (pattern.test(text) && !allowed.some((owner) => file.startsWith(owner)))
          offences.push(`${file} → ${table}`);
      }
    }
    expect(offences).toEqual([]);
  });

  test("records are written only by the record-write engine, so every write reaches the change log", async () => {
    const writers = /\.(insertRecord|updateRecord|deleteRecord|appendChanges|nextSequenceValue)\(/;
    const offences: string[] = [];
    for (const file of sources) {
      if (file.startsWith("api/records/") || file.startsWith("api/store/")) continue;
      if (writers.test(await Bun.file(`${root}/${file}`).text())) offences.push(file);
    }
    expect(offences).toEqual([]);
  });

  test("the writes that bypass the change log (a store copy's imports) are made by the store copy alone", async () => {
    // A copy writes records, sequences and change-log entries as another store holds them, with no
    // entry of their own: anywhere else they would be writes no webhook hears of.
    const imports = /\.(importRecords|importSequences|importChanges|importCatalogue|importDeliveries)\(/;
    const offences: string[] = [];
    for (const file of sources) {
      if (file === "api/admin/copy-store.ts" || file.startsWith("api/store/")) continue;
      if (imports.test(await Bun.file(`${root}/${file}`).text())) offences.push(file);
    }
    expect(offences).toEqual([]);
  });

  test("no folder barrels (index.ts)", () => {
    expect(sources.filter((file) => file.endsWith("/index.ts"))).toEqual([]);
  });
});
