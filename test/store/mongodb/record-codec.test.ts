/**
 * The MongoDB record codec (api/store/mongodb/record-codec.ts): every field type's values, edges
 * included (the year 0000 and the last millisecond of 9999, int32's and 2^53's bounds, negative
 * zero, decimals of 34, 35 and 38 digits and of 38 decimal places, text at its longest, NUL and
 * characters beyond the BMP, empty strings and lists), encoded, serialized to BSON by the driver
 * and read back (as a read promotes values, and as it leaves them boxed), decode to the record
 * values they were; the BSON types they are stored as; the decimal shadow; NULL as written and
 * as missing; what another program may have written; what the codec refuses to read.
 */
import { describe, expect, test } from "bun:test";
import { BSON, Decimal128, type Document, Int32, Long } from "mongodb";
import type { FieldDef } from "../../../api/model/catalogue.ts";
import { findField } from "../../../api/model/catalogue.ts";
import type { FieldValue, RecordValues } from "../../../api/model/record-values.ts";
import {
  canonicalDecimalText,
  comparableKey,
  decimalShadow,
  decodeFields,
  decodeValue,
  encodeFields,
  encodeValue,
  StoredValueError,
  shadowKey,
} from "../../../api/store/mongodb/record-codec.ts";
import { testObject } from "../../eql/support/test-catalogue.ts";
import { DATES, DECIMALS, INSTANTS, INTS, TEXTS, TIMES } from "../../eql/support/value-pools.ts";

const things = testObject("Things");
const field = (name: string) => findField(things, name) as FieldDef;
const YEAR_0000 = -62_167_219_200_000;

/** Values per field, one record per position (shorter lists repeat their last value). */
const VALUES: Record<string, FieldValue[]> = {
  Name: [...TEXTS, "", "a\u0000b", "x".repeat(255), "😀".repeat(255), null],
  Note: ["", "é".repeat(131_072), "line\r\nbreak\u2028", null],
  Link: ["https://example.com/?q=%20", "h".repeat(2048), null],
  Count: [...INTS, 0, -0, 2 ** 31 - 1, -(2 ** 31), 2 ** 31, -(2 ** 31) - 1, null],
  Minutes: [0, 1, 2 ** 31 - 1, null],
  Price: [
    ...DECIMALS,
    "0.0000001",
    "-0.00000000000000000000000000000000000001",
    "1234567890123456789012345678901234",
    "12345678901234567890123456789012345",
    "99999999999999999999999999999999999999",
    "-1234567890123456789012345678.9012345678",
    "100000000000000000000000000000000000000",
    null,
  ],
  Flag: [true, false, null],
  Day: [...DATES, "0000-01-01", "0000-02-29", null],
  At: [...INSTANTS, YEAR_0000, YEAR_0000 - 14 * 3_600_000, -0, null],
  Clock: [...TIMES, "00:00:00.001", "23:59:59.990", null],
  Kind: ["Alpha", "Dé'lta", "100%_x", null],
  Tags: [["red", "Green"], [], ["", "😀", "a.b", "$x", "ünï"], null],
  Owner: ["owner-00", "owner-gone", null],
};
const length = Math.max(...Object.values(VALUES).map((values) => values.length));
const rows: RecordValues[] = Array.from({ length }, (_, i) => {
  const row: RecordValues = {};
  for (const f of things.fields) {
    const values = VALUES[f.name];
    row[f.name] =
      f.type === "id" ? `thing-${i}` : values ? (values[Math.min(i, values.length - 1)] ?? null) : null;
  }
  return row;
});
/** The record values as they should read back: an int's -0 is 0, a datetime's -0 the instant 0. */
const expected = rows.map((row) => {
  const copy = { ...row };
  for (const [name, value] of Object.entries(copy)) if (Object.is(value, -0)) copy[name] = 0;
  return copy;
});

const roundTrip = (values: RecordValues, options?: BSON.DeserializeOptions): Document =>
  BSON.deserialize(BSON.serialize({ d: encodeFields(things.fields, values) }), options).d as Document;

describe("round trip through the driver's BSON", () => {
  test.each([
    ["promoted, as a read returns them", undefined],
    ["boxed (promoteValues: false)", { promoteValues: false }],
    ["int64 kept as Long (promoteLongs: false)", { promoteLongs: false }],
  ] as const)("every field type's values come back as written: %s", (_label, options) => {
    const decoded = rows.map((row) => decodeFields(things.fields, roundTrip(row, options)));
    expect(decoded).toEqual(expected);
    // toEqual tells 0 from -0: no -0 comes back.
    for (const row of decoded)
      for (const value of Object.values(row)) expect(Object.is(value, -0)).toBe(false);
  });
});

describe("BSON types", () => {
  const typeOf = (name: string, value: FieldValue) => {
    const document = BSON.deserialize(BSON.serialize({ v: encodeValue(field(name), value) }), {
      promoteValues: false,
    });
    const stored = document.v as { _bsontype?: string } | null;
    return stored === null
      ? "null"
      : (stored._bsontype ??
          (stored instanceof Date ? "Date" : Array.isArray(stored) ? "Array" : typeof stored));
  };
  test.each([
    ["Count", 42, "Int32"],
    ["Count", -(2 ** 31), "Int32"],
    ["Count", 2 ** 31, "Long"],
    ["Count", 9007199254740991, "Long"],
    ["Count", -0, "Int32"],
    ["Minutes", 2 ** 31 - 1, "Int32"],
    ["Price", "123.456", "Decimal128"],
    ["Price", "1234567890123456789012345678901234", "Decimal128"],
    ["Price", "12345678901234567890123456789012345", "string"],
    ["At", 0, "Date"],
    ["Day", "2024-05-01", "string"],
    ["Clock", "10:00:00.000", "string"],
    ["Flag", false, "boolean"],
    ["Tags", [], "Array"],
    ["Name", null, "null"],
  ] as const)("%s %p is stored as %s", (name, value, type) => {
    expect(typeOf(name, value as FieldValue)).toBe(type);
  });

  test("a decimal's text is kept exactly, in a Decimal128 while its digits fit", () => {
    const price = field("Price");
    for (const text of VALUES.Price as (string | null)[]) {
      if (text === null) continue;
      const stored = encodeValue(price, text);
      expect(stored instanceof Decimal128 ? canonicalDecimalText(stored.toString()) : stored).toBe(text);
    }
  });
});

describe("the decimal shadow", () => {
  test("every decimal has its double beside it, under a key no field can have", () => {
    const price = field("Price");
    expect(shadowKey(price)).toBe("price:num");
    expect(comparableKey(price)).toBe("price:num");
    expect(comparableKey(field("Count"))).toBe("count");
    for (const row of rows) {
      const document = encodeFields(things.fields, row);
      expect(document[shadowKey(price)]).toBe(row.Price === null ? null : Number(row.Price));
    }
    // A storage name is [a-z0-9_]: ':' keeps shadows apart from every field's key.
    expect(things.fields.every((f) => /^[a-z0-9_]+$/.test(f.mapping))).toBe(true);
  });

  test("the shadow is the double EQL compares (0.1 is the double 0.1; 99999999999999.99 rounds)", () => {
    expect(decimalShadow("0.1")).toBe(0.1);
    expect(decimalShadow("99999999999999.99")).toBe(99999999999999.98);
    expect(decimalShadow(null)).toBe(null);
  });
});

describe("NULL", () => {
  test("is written as null, for every field (so an update can $set it)", () => {
    const document = encodeFields(things.fields, { UID: "thing-x" });
    for (const f of things.fields) if (f.type !== "id") expect(document[f.mapping]).toBe(null);
    expect(document[shadowKey(field("Price"))]).toBe(null);
  });

  test("a missing key or sub-document reads as NULL (a field defined after the document was written)", () => {
    expect(Object.values(decodeFields(things.fields, {})).every((value) => value === null)).toBe(true);
    expect(Object.values(decodeFields(things.fields, undefined)).every((value) => value === null)).toBe(true);
  });
});

describe("values another program may have written", () => {
  test.each([
    ["1.50", "1.5"],
    ["1E+3", "1000"],
    ["1.2E-7", "0.00000012"],
    ["-0", "0"],
    ["-0.000", "0"],
    ["0E-20", "0"],
    ["-12.5E+1", "-125"],
  ])("Decimal128 %s reads as %s", (text, canonical) => {
    expect(decodeValue(field("Price"), Decimal128.fromString(text))).toBe(canonical);
  });

  test("int32, int64 and double wrappers read as their integers", () => {
    expect(decodeValue(field("Count"), new Int32(7))).toBe(7);
    expect(decodeValue(field("Count"), Long.fromNumber(-(2 ** 40)))).toBe(-(2 ** 40));
    expect(decodeValue(field("Count"), new BSON.Double(3))).toBe(3);
  });

  test.each([
    ["Count", "12"],
    ["Count", 1.5],
    ["At", 1_700_000_000_000],
    ["At", new Date(Number.NaN)],
    ["Price", Decimal128.fromString("NaN")],
    ["Price", "abc"],
    ["Flag", 1],
    ["Tags", "red"],
    ["Tags", ["red", 1]],
    ["Name", 12],
  ] as const)("%s holding %p is refused with StoredValueError", (name, raw) => {
    expect(() => decodeValue(field(name), raw)).toThrow(StoredValueError);
  });
});
