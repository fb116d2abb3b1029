import { describe, expect, test } from "bun:test";
import { parse } from "graphql";
import { createDocumentCache } from "../../../api/graphql/document-cache.ts";
import { documentBytes, selectedFieldCount } from "../../../api/graphql/document-size.ts";

const oneOff = (n: number) => `mutation { schema { insertJobs(input: {Description: "job ${n}"}) } }`;
const withVariables = (n: number) =>
  `mutation M${n}($d: String) { schema { insertJobs(input: {Description: $d}) } }`;

/** Looks `query` up as the service does: a miss parses it and hands it to the cache. */
function lookUp(cache: ReturnType<typeof createDocumentCache>, query: string) {
  return cache.get("t1", 1, query) ?? cache.add("t1", 1, query, parse(query));
}

describe("document cache: what it keeps", () => {
  test("a one-off document (no variables) is not kept; seen a second time, it is", () => {
    const cache = createDocumentCache(1024 * 1024);
    expect(lookUp(cache, oneOff(1)).kept).toBe(false);
    expect(cache.usage().entries).toBe(0);
    expect(lookUp(cache, oneOff(1)).kept).toBe(true);
    expect(lookUp(cache, oneOff(1)).kept).toBe(true);
    expect(cache.usage()).toMatchObject({ entries: 1, hits: 1, misses: 2 });
  });

  test("2,000 unique one-offs: none kept, no bytes held", () => {
    const cache = createDocumentCache(1024 * 1024);
    for (let n = 0; n < 2000; n++) lookUp(cache, oneOff(n));
    expect(cache.usage()).toMatchObject({ entries: 0, bytes: 0 });
  });

  test("a document declaring variables is kept at once and served from the cache after", () => {
    const cache = createDocumentCache(1024 * 1024);
    const first = lookUp(cache, withVariables(1));
    expect(first.kept).toBe(true);
    expect(lookUp(cache, withVariables(1))).toBe(first);
    expect(cache.usage()).toMatchObject({ entries: 1, hits: 1, misses: 1 });
  });

  test("it remembers the last 10,000 one-offs, not more", () => {
    const cache = createDocumentCache(1024 * 1024);
    lookUp(cache, oneOff(-1));
    for (let n = 0; n < 10_000; n++) lookUp(cache, oneOff(n));
    expect(lookUp(cache, oneOff(-1)).kept).toBe(false);
    expect(lookUp(cache, oneOff(9_999)).kept).toBe(true);
  });

  test("the same text for another tenant or schema version is another document", () => {
    const cache = createDocumentCache(1024 * 1024);
    const query = withVariables(1);
    cache.add("t1", 1, query, parse(query));
    expect(cache.get("t2", 1, query)).toBeUndefined();
    expect(cache.get("t1", 2, query)).toBeUndefined();
    expect(cache.get("t1", 1, query)).toBeDefined();
  });
});

describe("document cache: its byte budget", () => {
  const BUDGET = 256 * 1024;

  test("2,000 unique kept documents: accounted bytes never over the budget, least recently used dropped", () => {
    const cache = createDocumentCache(BUDGET);
    let most = 0;
    for (let n = 0; n < 2000; n++) {
      lookUp(cache, withVariables(n));
      most = Math.max(most, cache.usage().bytes);
    }
    expect(most).toBeLessThanOrEqual(BUDGET);
    const { entries } = cache.usage();
    expect(entries).toBeGreaterThan(10);
    expect(entries).toBeLessThan(2000);
    expect(cache.get("t1", 1, withVariables(1999))).toBeDefined();
    expect(cache.get("t1", 1, withVariables(0))).toBeUndefined();
  });

  test("a hit makes a document the newest: it outlives documents added before and after it", () => {
    const cache = createDocumentCache(BUDGET);
    lookUp(cache, withVariables(0));
    for (let n = 1; n < 2000; n++) {
      lookUp(cache, withVariables(n));
      lookUp(cache, withVariables(0));
    }
    expect(cache.get("t1", 1, withVariables(0))).toBeDefined();
  });

  test("what is made for a document (compiled code, read plans) counts against the budget", () => {
    const cache = createDocumentCache(BUDGET);
    for (let n = 0; n < 5; n++) lookUp(cache, withVariables(n));
    const before = cache.usage().bytes;
    const newest = lookUp(cache, withVariables(4));
    newest.account(10_000);
    expect(cache.usage().bytes).toBe(before + 10_000);
    newest.account(-10_000);
    expect(cache.usage().bytes).toBe(before);
    newest.account(BUDGET);
    // Over the budget alone: everything goes, this one too.
    expect(cache.usage()).toMatchObject({ entries: 0, bytes: 0 });
    newest.account(5);
    expect(cache.usage().bytes).toBe(0);
  });

  test("a document bigger than the whole budget is not kept", () => {
    const big = `mutation ($d: String) { schema { insertJobs(input: {Description: $d, Address: "${"x".repeat(BUDGET)}"}) } }`;
    expect(documentBytes(big)).toBeGreaterThan(BUDGET);
    const cache = createDocumentCache(BUDGET);
    expect(lookUp(cache, big).kept).toBe(false);
    expect(cache.usage()).toMatchObject({ entries: 0, bytes: 0 });
  });
});

describe("selectedFieldCount", () => {
  const count = (query: string) => {
    const document = parse(query);
    const operation = document.definitions.find((d) => d.kind === "OperationDefinition");
    if (operation?.kind !== "OperationDefinition") throw new Error("no operation");
    return selectedFieldCount(document, operation);
  };
  test.each([
    ["{ a }", 1],
    ["{ a { b c } d }", 4],
    ["{ x: a { b } y: a { b } }", 4],
    ["{ a { ... on T { b c } } }", 3],
    ["query { a { ...F } b { ...F } } fragment F on T { c d { e } }", 8],
    // Each fragment counted once, reused: a spread fragment's fields add up without walking it again.
    [
      "{ ...F3 } fragment F3 on Q { ...F2 ...F2 } fragment F2 on Q { ...F1 ...F1 } fragment F1 on Q { a b }",
      8,
    ],
  ])("%s selects %d fields", (query, expected) => {
    expect(count(query)).toBe(expected);
  });
});
