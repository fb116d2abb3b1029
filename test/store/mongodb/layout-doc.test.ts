/**
 * docs/mongodb-layout.md and the layout in code (common/store/mongodb/layout.ts) agree: the
 * document's "Collections" table is the code's LAYOUT rendered, row for row, so a collection or an
 * index added, renamed or dropped in one and not the other fails here.
 */
import { expect, test } from "bun:test";
import { type CollectionLayout, type IndexKeys, LAYOUT } from "../../../common/store/mongodb/layout.ts";

const DOC = `${import.meta.dir}/../../../docs/mongodb-layout.md`;

const keysText = (keys: IndexKeys) =>
  `{${Object.entries(keys)
    .map(([path, direction]) => `${/^[A-Za-z_]\w*$/.test(path) ? path : JSON.stringify(path)}: ${direction}`)
    .join(", ")}}`;

/** One collection as a row of the document's table. */
function row(collection: CollectionLayout): string {
  const indexes =
    collection.indexes
      .map(
        (index) =>
          `\`${index.name}\` \`${keysText(index.keys)}\`${index.unique ? " unique" : ""}: ${index.serves}`,
      )
      .join("<br>") || "`_id` only";
  return `| \`${collection.name}\` | \`${collection.document}\` | ${indexes} |`;
}

/** The rows of the first table after the heading `## Collections`. */
function documentedRows(text: string): string[] {
  const start = text.indexOf("\n## Collections\n");
  if (start < 0) throw new Error('docs/mongodb-layout.md has no "## Collections" section');
  const lines = text.slice(start).split("\n");
  const first = lines.findIndex((line) => line.startsWith("|"));
  const rows: string[] = [];
  for (const line of lines.slice(first + 2)) {
    if (!line.startsWith("|")) break;
    rows.push(line);
  }
  return rows;
}

test("the document's Collections table is the layout in code, row for row (every collection and index, named)", async () => {
  const text = await Bun.file(DOC).text();
  const expected = LAYOUT.map(row);
  const rows = documentedRows(text);
  if (rows.join("\n") !== expected.join("\n"))
    console.log(`docs/mongodb-layout.md, "## Collections", should list:\n${expected.join("\n")}`);
  expect(rows).toEqual(expected);
  // No collection or index named twice (a copy-paste would make two rows the same).
  expect(new Set(LAYOUT.map((c) => c.name)).size).toBe(LAYOUT.length);
  const indexNames = LAYOUT.flatMap((c) => c.indexes.map((i) => `${c.name}.${i.name}`));
  expect(new Set(indexNames).size).toBe(indexNames.length);
});
