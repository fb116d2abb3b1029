/** The storage names of custom definitions: short names mapped as always, long ones within 63 bytes and apart. */
import { describe, expect, test } from "bun:test";
import { customMapping, isSameMapping, MAX_MAPPING_BYTES } from "../../api/model/custom-mapping.ts";

const bytes = (text: string) => Buffer.byteLength(text);

describe("customMapping", () => {
  test.each([
    ["CustomExternalObject", "__customexternalobject"],
    ["ExternalId", "__externalid"],
    ["a", "__a"],
    ["Snake_Case_9", "__snake_case_9"],
    ["Q".repeat(61), `__${"q".repeat(61)}`],
  ])("a name whose mapping fits keeps the mapping it always had: %s", (name, mapping) => {
    expect(customMapping(name)).toBe(mapping);
  });

  test.each([62, 63, 64])("a name of %i characters is shortened to 63 bytes, with a digest", (length) => {
    const mapping = customMapping("Q".repeat(length));
    expect(bytes(mapping)).toBe(MAX_MAPPING_BYTES);
    expect(mapping).toMatch(/^___q{51}_[0-9a-f]{8}$/);
  });

  test.each([
    ["P".repeat(64), `${"P".repeat(63)}X`],
    ["G".repeat(64), `${"G".repeat(63)}H`],
    [`${"A".repeat(61)}bc`, `${"A".repeat(61)}cb`],
    ["Z".repeat(62), "Z".repeat(63)],
  ])("two long names with a common prefix get two mappings: %s, %s", (first, second) => {
    const [a, b] = [customMapping(first), customMapping(second)];
    expect(a).not.toBe(b);
    expect(isSameMapping(a, b)).toBe(false);
    for (const mapping of [a, b]) expect(bytes(mapping)).toBeLessThanOrEqual(MAX_MAPPING_BYTES);
  });

  test("stable, and the same for names differing only in case (one name to the catalogue)", () => {
    const name = `${"Long".repeat(15)}Name`;
    expect(customMapping(name)).toBe(customMapping(name));
    expect(customMapping(name.toUpperCase())).toBe(customMapping(name));
  });

  test("a short name never takes a long one's mapping: a long one starts with three underscores", () => {
    const long = customMapping("Q".repeat(64));
    const tail = long.slice(3); // `q…q_<digest>`: a name of 60 characters itself
    expect(customMapping(tail)).toBe(`__${tail}`);
    expect(isSameMapping(customMapping(tail), long)).toBe(false);
  });
});

describe("isSameMapping", () => {
  test.each([
    ["__abc", "__abc", true],
    ["__abc", "__ABC", true],
    ["__abc", "__abd", false],
    // A mapping saved before mappings were shortened (66 bytes) and one of 63 bytes that PostgreSQL
    // would take for it.
    [`__${"p".repeat(64)}`, `__${"p".repeat(61)}`, true],
    [`__${"p".repeat(64)}`, `__${"p".repeat(63)}x`, true],
    [`__${"p".repeat(64)}`, customMapping("P".repeat(64)), false],
  ])("%s and %s: %p", (a, b, same) => {
    expect(isSameMapping(a, b)).toBe(same);
  });
});
