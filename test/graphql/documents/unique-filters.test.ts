/**
 * Hardening, cache growth: a burst of unique filters (as variables of one
 * document, or inline) must not grow the API. Each checked filter used to stay
 * cached per tenant up to 1,000 of them, whatever their length (up to 10,000
 * characters: ~90 KB of heap each).
 */
import { heapStats } from "bun:jsc";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { preparedArgumentsUsage } from "../../../api/graphql/queries/prepared-arguments.ts";
import { createTestApp, type ProvisionedTenant, type TestApp } from "../../support/app.ts";
import { graphqlClient } from "../../support/graphql.ts";

const MiB = 1024 * 1024;

let t: TestApp;
let acme: ProvisionedTenant;

beforeAll(async () => {
  t = await createTestApp({ LOG_LEVEL: "error" });
  acme = await t.provision("acme");
});
afterAll(() => t.close());

/** A filter of ~9,500 characters (of at most 10,000), never the same for two values of `n`. */
const longFilter = (n: number) =>
  Array.from({ length: 200 }, (_, k) => `Description == 'f${n}x${k}-${"y".repeat(20)}'`).join(" OR ");

const heapNow = () => {
  Bun.gc(true);
  return heapStats().heapSize;
};

test("1,000 unique 9,500-character filters: prepared ones held ≤ 4 MiB, heap grows < 40 MiB", async () => {
  const gql = graphqlClient(t, acme.adminToken);
  const query = `query Jobs($f: String) {
    jobs(first: 2, filter: $f, orderBy: "Duration DESC, UID") { edges { node { UID } } }
  }`;
  for (let n = 0; n < 5; n++) await gql(query, { f: longFilter(-n - 1) });
  const catalogue = await t.catalogues.get(acme.tenant.id);
  const before = heapNow();
  let most = 0;
  for (let n = 0; n < 1000; n++) {
    const answer = await gql(query, { f: longFilter(n) });
    expect(answer.errors).toBeUndefined();
    most = Math.max(most, preparedArgumentsUsage(catalogue).bytes);
  }
  expect(most).toBeLessThanOrEqual(4 * MiB);
  const grown = heapNow() - before;
  expect(grown).toBeLessThan(40 * MiB);
}, 60_000);
