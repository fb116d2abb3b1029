/**
 * Adding a field with a default to a table of records writes none of them: the column's DEFAULT
 * serves the rows stored without it. (An UPDATE of every row would rewrite each whole, holding
 * the one writer, and every tenant's requests, for the table's size.)
 */
import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { MAX_DEFAULT_LENGTH } from "../../../api/catalogue/define-field.ts";
import { quoteIdent } from "../../../api/store/sql/quote-ident.ts";
import { addColumn, ensureObjectTable, tableName } from "../../../api/store/sqlite/catalogue-ddl.ts";
import { customField, customObject } from "../conformance/fixtures.ts";

const ROWS = 1000;
const db = new Database(":memory:");
afterAll(() => db.close());

const pages = () =>
  db.query<{ n: number }, []>("SELECT page_count AS n FROM pragma_page_count()").get()?.n ?? 0;

test("a column added with the longest default writes no row, and every row reads the default", () => {
  const object = customObject("Shelves", { Label: { type: "string" } });
  ensureObjectTable(db, 1, object);
  const table = quoteIdent(tableName(1, object));
  const insert = db.query(`INSERT INTO ${table} (uid) VALUES (?)`);
  db.transaction(() => {
    for (let i = 0; i < ROWS; i++) insert.run(crypto.randomUUID());
  })();
  const note = customField("Shelves", "Note", {
    type: "textarea",
    defaultValue: "d".repeat(MAX_DEFAULT_LENGTH),
  });
  const before = pages();

  addColumn(db, tableName(1, object), note);

  // Written into every row, the default would take ROWS × MAX_DEFAULT_LENGTH bytes (over 60 pages).
  expect(pages() - before).toBeLessThanOrEqual(1);
  const count = db.query<{ n: number }, [string]>(
    `SELECT count(*) AS n FROM ${table} WHERE ${quoteIdent(note.mapping)} = ?`,
  );
  expect(count.get(note.defaultValue as string)?.n).toBe(ROWS);
});
