/**
 * PostgreSQL's column types (api/store/postgres/record-codec.ts): every field type's values, the
 * edges included (the year 0000, the last millisecond of a day and of 9999, 2^53 − 1, decimals
 * of 16 digits, array items PostgreSQL must quote), written and read back through Bun's client,
 * decode to the record values they were.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { FieldValue, RecordValues } from "../../../api/model/record-values.ts";
import {
  columnType,
  createTableSql,
  decodeValue,
  encodeValue,
} from "../../../api/store/postgres/record-codec.ts";
import { quoteIdent } from "../../../api/store/sql/quote-ident.ts";
import { testObject } from "../../eql/support/test-catalogue.ts";
import { DATES, DECIMALS, INSTANTS, INTS, TEXTS, TIMES } from "../../eql/support/value-pools.ts";
import { createTestDatabase, type TestDatabase } from "../../support/private-postgres.ts";

const things = testObject("Things");
let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase("record codec");
  await database.sql.unsafe(createTableSql("things", things));
});
afterAll(async () => {
  await database?.drop();
});

/** Values per field, one record per position (shorter lists repeat their last value). */
const VALUES: Record<string, FieldValue[]> = {
  Name: [...TEXTS, null],
  Count: [...INTS.filter((n) => Math.abs(n) <= 2 ** 31), null],
  Minutes: [0, 2 ** 31 - 1, null],
  Price: [...DECIMALS, "0.0000000000000001", "-9999999999999999", null],
  Flag: [true, false, null],
  Day: [...DATES, "0000-01-01", "0000-02-29", null],
  // 0000-01-01T00:00:00.000Z, and 14 hours before it (the year 0000 at the offset +14:00).
  At: [...INSTANTS, -62_167_219_200_000, -62_167_219_200_000 - 14 * 3_600_000, null],
  Clock: [...TIMES, "00:00:00.001", "23:59:59.990", "12:00:00.100", null],
  Tags: [["red", "Green"], [], ['a"b', "c,d", "{e}", "f\\g", "NULL", "", " sp ", "😀"], null],
};
const length = Math.max(...Object.values(VALUES).map((values) => values.length));
const rows: RecordValues[] = Array.from({ length }, (_, i) => {
  const row: RecordValues = {};
  for (const field of things.fields) {
    const values = VALUES[field.name];
    row[field.name] =
      field.type === "id" ? `thing-${i}` : values ? (values[Math.min(i, values.length - 1)] ?? null) : null;
  }
  return row;
});

test("every field type's values come back as they were written", async () => {
  const insert = `INSERT INTO things VALUES (${things.fields.map((_, i) => `$${i + 1}`).join(", ")})`;
  for (const row of rows)
    await database.sql.unsafe(
      insert,
      things.fields.map((field) => encodeValue(field, row[field.name] ?? null)),
    );
  const columns = things.fields.map((field) => quoteIdent(field.mapping)).join(", ");
  const read = (await database.sql
    .unsafe(`SELECT ${columns} FROM things ORDER BY uid`)
    .values()) as unknown[][];
  const decoded = read.map((raw) => {
    const row: RecordValues = {};
    things.fields.forEach((field, i) => {
      row[field.name] = decodeValue(field, raw[i] as never);
    });
    return row;
  });
  const byUid = (a: RecordValues, b: RecordValues) => String(a.UID).localeCompare(String(b.UID));
  expect(decoded.sort(byUid)).toEqual([...rows].sort(byUid));
});

test("each field type has its column type", () => {
  const types = Object.fromEntries(things.fields.map((field) => [field.type, columnType(field)]));
  expect(types).toEqual({
    id: 'text COLLATE "C"',
    reference: 'text COLLATE "C"',
    string: 'text COLLATE "C"',
    textarea: 'text COLLATE "C"',
    url: 'text COLLATE "C"',
    picklist: 'text COLLATE "C"',
    multipicklist: 'text[] COLLATE "C"',
    int: "bigint",
    duration: "bigint",
    boolean: "boolean",
    decimal: "numeric",
    time: "time(3)",
    date: 'text COLLATE "C"',
    datetime: "bigint",
  });
});
