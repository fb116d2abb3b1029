/**
 * The document limits against the attacks that found them, through the API:
 * a fragment bomb, introspection nested and aliased, deep offsets and counts
 * by the hundred. Each is refused with LIMIT_EXCEEDED before it costs the
 * process (or the store) anything, and other requests go on.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { getIntrospectionQuery } from "graphql";
import { createTestApp, type TestApp } from "../support/app.ts";
import { countingStore } from "../support/counting-store.ts";
import { graphqlClient } from "../support/graphql.ts";

let t: TestApp;
let gql: ReturnType<typeof graphqlClient>;
let counter: ReturnType<typeof countingStore>;

beforeAll(async () => {
  t = await createTestApp({}, (store) => {
    counter = countingStore(store);
    return counter.store;
  });
  const acme = await t.provision("acme");
  gql = graphqlClient(t, acme.adminToken);
  const seeded = await gql(`mutation { schema {
    r: insertRegions(input: {Name: "North", Timezone: "UTC"}, idAlias: "r")
    ${Array.from({ length: 5 }, (_, i) => `j${i}: insertJobs(input: {Duration: ${i}, RegionId: "r"})`).join("\n")}
  } }`);
  expect(seeded.errors).toBeUndefined();
});
afterAll(() => t.close());

const repeat = (count: number, make: (i: number) => string) =>
  Array.from({ length: count }, (_, i) => make(i)).join(" ");

/** `levels` fragments, each spreading the next `width` times (wrapped by `wrap`). */
function fragmentBomb(root: string, levels: number, width: number, wrap = (spreads: string) => spreads) {
  let text = `{ ${root.replace("$", "...F0")} }`;
  for (let i = 0; i < levels; i++) {
    const body = i + 1 < levels ? wrap(repeat(width, () => `...F${i + 1}`)) : "UID Name";
    text += `\nfragment F${i} on Jobs { ${body} }`;
  }
  return text;
}

/** The answer, how long it took, its size and the store reads it made. */
async function measured(query: string, variables?: Record<string, unknown>) {
  counter.reset();
  const started = performance.now();
  const body = await gql(query, variables);
  return {
    body,
    ms: performance.now() - started,
    bytes: JSON.stringify(body).length,
    reads: counter.reads(),
  };
}

describe("fragment bombs", () => {
  // Each took 21 s and more before fragments were priced instead of expanded (24 levels: 2^24 fields).
  const BOMBS: [string, string][] = [
    ["24 fragments, each spreading the next twice", fragmentBomb(`jobsById(UID: "x") { $ }`, 24, 2)],
    [
      "the same in inline fragments",
      fragmentBomb(`jobsById(UID: "x") { $ }`, 24, 2, (s) => `... on Jobs { ${s} } ... { ${s} }`),
    ],
    ["8 fragments, each spreading the next 10 times", fragmentBomb(`jobsById(UID: "x") { $ }`, 8, 10)],
    ["under a page of no rows", fragmentBomb(`jobs(first: 0) { edges { node { $ } } }`, 24, 2)],
  ];
  for (const [what, bomb] of BOMBS) {
    // Not timed (speed lives in bench/abuse.ts): expanded, a bomb ran past the test's timeout.
    test(`${what}: LIMIT_EXCEEDED, no store read`, async () => {
      const { body, reads } = await measured(bomb);
      expect(body.errors?.[0]?.extensions.code).toBe("LIMIT_EXCEEDED");
      expect(body.errors?.[0]?.message).toContain("could read about");
      expect(reads).toBe(0);
    });
  }

  test("a plain query sent beside a bomb is answered at once", async () => {
    const started = performance.now();
    const plainDone = gql(`{ jobs(first: 5) { edges { node { UID } } } }`).then((body) => ({
      body,
      ms: performance.now() - started,
    }));
    const [bomb, plain] = await Promise.all([
      gql(fragmentBomb(`jobsById(UID: "x") { $ }`, 24, 2)),
      plainDone,
    ]);
    expect(bomb.errors?.[0]?.extensions.code).toBe("LIMIT_EXCEEDED");
    expect(plain.body.errors).toBeUndefined();
    expect(plain.body.data).toMatchObject({ jobs: { edges: Array(5).fill({ node: {} }) } });
    expect(plain.ms).toBeLessThan(500);
  });
});

describe("introspection counts like any query", () => {
  test("the full introspection query (GraphiQL, code generators) passes with the default limits", async () => {
    const { body } = await measured(getIntrospectionQuery());
    expect(body.errors).toBeUndefined();
    expect(body.data).toMatchObject({
      __schema: { types: expect.arrayContaining([expect.objectContaining({ name: "Jobs" })]) },
    });
  });

  test("introspection aliased by the hundred is refused; the answer stays small", async () => {
    // Answered 31 MB (and took the process to 1.1 GB) when introspection escaped the limits.
    const selection = `__schema { types { name fields { name args { name type { name ofType { name } } } type { name kind ofType { name kind ofType { name } } } } } }`;
    const { body, bytes } = await measured(`{ ${repeat(100, (i) => `a${i}: ${selection}`)} }`);
    expect(body.errors?.[0]?.extensions.code).toBe("LIMIT_EXCEEDED");
    expect(body.errors?.[0]?.message).toContain("could read about");
    expect(bytes).toBeLessThan(1024);
  });

  test("introspection nested past the depth limit is refused", async () => {
    const { body } = await measured(
      `{ __type(name: "Jobs") ${"{ fields { type ".repeat(6)}{ name }${" } }".repeat(6)} }`,
    );
    expect(body.errors?.[0]?.extensions.code).toBe("LIMIT_EXCEEDED");
    expect(body.errors?.[0]?.message).toContain("levels deep");
  });
});

describe("store work is priced before the store is asked", () => {
  test("100 aliased lists with deep offsets: LIMIT_EXCEEDED, no store read", async () => {
    // Blocked the API for 7.2 s on a large table before offsets and list queries were priced.
    const { body, reads } = await measured(
      `{ ${repeat(100, (i) => `a${i}: jobs(offset: 9999, first: 1) { edges { node { UID } } }`)} }`,
    );
    expect(body.errors?.[0]?.extensions.code).toBe("LIMIT_EXCEEDED");
    expect(reads).toBe(0);
  });

  test("10 lists with deep offsets: their skipped rows are priced", async () => {
    const { body, reads } = await measured(
      `{ ${repeat(10, (i) => `a${i}: jobs(offset: 10000, first: 1) { edges { node { UID } } }`)} }`,
    );
    expect(body.errors?.[0]?.message).toContain("could read about 100080 values");
    expect(reads).toBe(0);
  });

  test("100 totalCounts: LIMIT_EXCEEDED, no store read", async () => {
    // Blocked the API for 3.5 s on a large table before counts were limited (each `jobs` is a list query too).
    const { body, reads } = await measured(`{ ${repeat(100, (i) => `a${i}: jobs { totalCount }`)} }`);
    expect(body.errors?.[0]?.extensions.code).toBe("LIMIT_EXCEEDED");
    expect(body.errors?.[0]?.message).toContain("200 lists and totalCounts");
    expect(reads).toBe(0);
  });

  test("an offset past the limit, given as a variable, is refused without a store read", async () => {
    const { body, reads } = await measured(
      `query ($o: Int) { jobs(offset: $o) { edges { node { UID } } } }`,
      {
        o: 10_001,
      },
    );
    expect(body.errors?.[0]?.extensions.code).toBe("LIMIT_EXCEEDED");
    expect(body.errors?.[0]?.message).toContain("offset may not exceed 10000");
    expect(reads).toBe(0);
  });

  test("a list with its count, a few offsets and counts still run", async () => {
    const { body } = await measured(`{
      all: jobs(first: 2) { totalCount edges { node { UID } } }
      later: jobs(offset: 3) { totalCount edges { offset } }
      far: jobs(offset: 10000) { edges { offset } }
    }`);
    expect(body.errors).toBeUndefined();
    expect(body.data).toMatchObject({
      all: { totalCount: 5 },
      later: { totalCount: 5, edges: [{ offset: 3 }, { offset: 4 }] },
      far: { edges: [] },
    });
  });
});

describe("filter sub-queries are limited and priced", () => {
  /** `UID IN (SELECT UID FROM Regions WHERE ` `depth` times around `inner` (the report's filter). */
  const nested = (depth: number, inner = "Name == 'North'") =>
    `${"UID IN (SELECT UID FROM Regions WHERE ".repeat(depth)}${inner}${")".repeat(depth)}`;
  const regions = (filter: string) => `{ regions(filter: ${JSON.stringify(filter)}) { totalCount } }`;

  test.each([30, 29])(
    "%i nested (INTERNAL from 30 before): priced past the scans, no store read",
    async (depth) => {
      const { body, reads } = await measured(regions(nested(depth)));
      expect(body.errors?.[0]?.extensions.code).toBe("LIMIT_EXCEEDED");
      expect(body.errors?.[0]?.message).toContain(`${depth + 2} lists and totalCounts`);
      expect(reads).toBe(0);
    },
  );

  test("28 nested with NOTLIKE at each level (INTERNAL before), as a variable: LIMIT_EXCEEDED", async () => {
    const level = "UID IN (SELECT UID FROM Regions WHERE Description NOTLIKE '%zz%' AND ";
    const f = `${level.repeat(28)}Name == 'x'${")".repeat(28)}`;
    const { body, reads } = await measured("query ($f: String) { regions(filter: $f) { totalCount } }", {
      f,
    });
    expect(body.errors?.[0]?.extensions.code).toBe("LIMIT_EXCEEDED");
    expect(reads).toBe(0);
  });

  test.each([5, 8])(
    "%i nested, within the scans: FILTER_PARSE_ERROR at the fifth, no store read",
    async (depth) => {
      const { body, reads } = await measured(regions(nested(depth)));
      expect(body.errors?.[0]?.extensions.code).toBe("FILTER_PARSE_ERROR");
      expect(body.errors?.[0]?.message).toBe("sub-queries nest deeper than 4 levels at column 160");
      expect(body.errors?.[0]?.extensions.position).toEqual({ offset: 159, line: 1, column: 160 });
      expect(reads).toBe(0);
    },
  );

  test("4 nested and 8 in all still run", async () => {
    const eight = `${nested(4)} AND ${Array(4).fill(nested(1)).join(" AND ")}`;
    const { body } = await measured(regions(eight));
    expect(body.errors).toBeUndefined();
    expect(body.data).toEqual({ regions: { totalCount: 1 } });
  });

  test("each sub-query is priced as a scan: the report's 5 aliases are refused, no store read", async () => {
    // 5 × (list + totalCount + 8 sub-queries) = 50 scans; one such request of 20 nested took 207 ms of the loop.
    const filter = `${Array(8).fill("UID IN (SELECT UID FROM Jobs WHERE Description LIKE '%a%')").join(" OR ")} OR Duration == 1`;
    const { body, reads } = await measured(
      `{ ${repeat(5, (i) => `a${i}: jobs(filter: ${JSON.stringify(filter)}) { totalCount }`)} }`,
    );
    expect(body.errors?.[0]?.extensions.code).toBe("LIMIT_EXCEEDED");
    expect(body.errors?.[0]?.message).toContain("50 lists and totalCounts, its filters' sub-queries counted");
    expect(reads).toBe(0);
  });

  test("a filter given as a variable is priced with each request's value", async () => {
    const query = `query ($f: String) { a: jobs(filter: $f) { totalCount } b: jobs(filter: $f) { totalCount } }`;
    const cheap = await measured(query, { f: "UID IN (SELECT UID FROM Jobs WHERE Duration == 1)" });
    expect(cheap.body.errors).toBeUndefined();
    expect(cheap.body.data).toEqual({ a: { totalCount: 1 }, b: { totalCount: 1 } });
    // The same document again (kept by now): 2 × (1 + 1 + 4) = 12 scans.
    const dear = await measured(query, {
      f: Array(4).fill(nested(1).replace("Regions", "Jobs")).join(" OR "),
    });
    expect(dear.body.errors?.[0]?.extensions.code).toBe("LIMIT_EXCEEDED");
    expect(dear.body.errors?.[0]?.message).toContain("12 lists and totalCounts");
    expect(dear.reads).toBe(0);
  });
});

describe("bracket nesting is bounded before the parser recurses", () => {
  test("a list literal nested 50,000 deep is a parse error that says why, not the parser's stack overflow", async () => {
    const deep = `{ regions(filter: ${"[".repeat(50_000)}${"]".repeat(50_000)}) { totalCount } }`;
    const { body, reads } = await measured(deep);
    expect(body.errors?.[0]?.extensions.code).toBe("GRAPHQL_PARSE_FAILED");
    expect(body.errors?.[0]?.message).toContain("nests brackets more than 256 levels deep");
    expect(reads).toBe(0);
    // The process goes on serving.
    expect((await gql("{ regions { totalCount } }")).data).toEqual({ regions: { totalCount: 1 } });
  });

  test("brackets in strings and comments nest nothing", async () => {
    const noise = "[".repeat(300);
    const { body } = await measured(`# ${noise}
      { regions(filter: "Name != '${noise}'") { totalCount } }`);
    expect(body.errors).toBeUndefined();
    expect(body.data).toEqual({ regions: { totalCount: 1 } });
  });
});
