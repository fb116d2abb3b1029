/**
 * Keyset cursors (api/graphql/queries/cursor.ts): a cursor the order made decodes to its key; one
 * that does not fit the order (another order's, another length, a value of the wrong type or out
 * of range for its term's field) is a ValidationError before any store sees it.
 */
import { describe, expect, test } from "bun:test";
import { parseOrderBy } from "../../../api/eql/parse-order-by.ts";
import {
  decodeCursor,
  encodeCursor,
  orderFingerprint,
  type SortKey,
} from "../../../api/graphql/queries/cursor.ts";
import { ValidationError } from "../../../common/errors.ts";
import { TEST_CATALOGUE, testObject } from "../../eql/support/test-catalogue.ts";

const UID = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";

const orderOf = (text: string) => parseOrderBy(text, testObject("Things"), TEST_CATALOGUE);

/** `values` (the JSON a cursor carries after its fingerprint) sent as a cursor of `orderText`. */
const decode = (orderText: string, values: unknown[], fingerprint?: string) => {
  const order = orderOf(orderText);
  const own = orderFingerprint(order);
  const text = Buffer.from(JSON.stringify([fingerprint ?? own, ...values])).toString("base64url");
  return decodeCursor(text, own, order);
};

const expectRefused = (orderText: string, values: unknown[]) => {
  let thrown: unknown;
  try {
    decode(orderText, values);
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(ValidationError);
  expect((thrown as ValidationError).message).toStartWith("invalid cursor");
};

describe("a cursor of the order decodes to its key", () => {
  const fits: [string, unknown[], SortKey][] = [
    ["Count DESC", [42, UID], [42, UID]],
    // PostgreSQL reads bigint keys back as text.
    ["Count DESC", ["-42", UID], [-42, UID]],
    ["Count", [null, UID], [null, UID]],
    ["Minutes", [2 ** 31 - 1, UID], [2 ** 31 - 1, UID]],
    ["Price DESC", [12.5, UID], [12.5, UID]],
    ["Price", [-0.1, UID], [-0.1, UID]],
    ["Name DESC", ["x", UID], ["x", UID]],
    ["Name", ["", UID], ["", UID]],
    [
      "Kind",
      ["not an item: order keys are not checked against items", UID],
      ["not an item: order keys are not checked against items", UID],
    ],
    ["At", [1714557600000, UID], [1714557600000, UID]],
    ["At", ["-62167219200000", UID], [-62167219200000, UID]],
    ["Flag", [1, UID], [1, UID]],
    ["Day", ["0000-02-29", UID], ["0000-02-29", UID]],
    // PostgreSQL reads time(3) back without trailing zeros; the stores compare the padded form.
    ["Clock", ["10:00:00", UID], ["10:00:00.000", UID]],
    ["Clock", ["23:59:59.999", UID], ["23:59:59.999", UID]],
    ["Owner", [UID, UID], [UID, UID]],
    ["Owner.Name, Owner.Score", [null, null, UID], [null, null, UID]],
    ["UID DESC", [UID], [UID]],
  ];
  test.each(fits)("%p with %j", (orderText, values, key) => {
    expect(decode(orderText, values)).toEqual(key);
  });

  test("a cursor the encoder made decodes to the same key", () => {
    const order = orderOf("Price DESC, Name");
    const key: SortKey = [3.25, "a", UID];
    expect(decodeCursor(encodeCursor(key, orderFingerprint(order)), orderFingerprint(order), order)).toEqual(
      key,
    );
  });
});

describe("a cursor that does not fit the order is refused", () => {
  const misfits: [string, string, unknown[]][] = [
    ["int out of bigint's range", "Count DESC", ["99999999999999999999999", "x"]],
    ["int past 2^53", "Count DESC", [2 ** 53, UID]],
    ["int as a word", "Count DESC", ["abc", UID]],
    ["int in exponent form", "Count DESC", ["1e5", UID]],
    ["int with a fraction", "Count", [1.5, UID]],
    ["duration as a boolean", "Minutes", [true, UID]],
    ["decimal as a word", "Price DESC", ["abc", UID]],
    ["decimal as text", "Price DESC", ["12.5", UID]],
    ["UID as a number", "Price DESC", [null, 5]],
    ["UID as null", "Price DESC", [1, null]],
    ["UID as another string", "Name", ["x", "not-a-uid"]],
    ["text as a number", "Name DESC", [5, UID]],
    ["text as an object", "Name", [{ a: 1 }, UID]],
    ["text as a list", "Name", [["x"], UID]],
    ["datetime as an instant's text", "At", ["2024-05-01T10:00:00Z", UID]],
    ["datetime with a fraction", "At", [1.5, UID]],
    ["boolean as 2", "Flag", [2, UID]],
    ["boolean as true", "Flag", [true, UID]],
    ["date not in the calendar", "Day", ["2024-02-30", UID]],
    ["date as a number", "Day", [20240501, UID]],
    ["time past midnight", "Clock", ["25:00", UID]],
    ["reference not a UID", "Owner", ["x", UID]],
    ["too few values", "Name", [UID]],
    ["too many values", "Name", ["x", UID, UID]],
  ];
  test.each(misfits)("%s", (_, orderText, values) => expectRefused(orderText, values));

  test("a cursor of another order, or no cursor at all", () => {
    const other = orderFingerprint(orderOf("Name"));
    expect(() => decode("Name DESC", ["x", UID], other)).toThrow(ValidationError);
    const order = orderOf("Name");
    for (const text of [
      "",
      "not base64 json",
      Buffer.from("{}").toString("base64url"),
      Buffer.from("[]").toString("base64url"),
    ])
      expect(() => decodeCursor(text, orderFingerprint(order), order)).toThrow(ValidationError);
  });
});
