/**
 * Conformance: `readJson`, the whole answer's JSON read in one go, equals
 * what the GraphQL resolvers build from the other reads of the same store
 * (the API's own GraphQL service, over the store under test, both ways).
 * Shapes: pages with totalCount, pageInfo and offsets in an order with NULLs,
 * lookups through aliases and fragments, reverse lists three levels deep with
 * filters and limits, records by UID found and not.
 */
import { describe, expect, test } from "bun:test";
import type { Principal } from "../../../api/auth/principal.ts";
import { createCatalogueService } from "../../../api/catalogue/catalogue-service.ts";
import { loadApiConfig } from "../../../api/config.ts";
import { createGraphQLService } from "../../../api/graphql/graphql-service.ts";
import { createReadAnswers } from "../../../api/graphql/queries/read-answers.ts";
import { createTenantSchemas, documentLimits } from "../../../api/graphql/tenant-schemas.ts";
import { STANDARD_OBJECTS } from "../../../api/model/standard-objects.ts";
import type { ReadNode } from "../../../api/store/read-tree.ts";
import type { User } from "../../../api/store/store.ts";
import { createLogger } from "../../../common/log.ts";
import { insertUserRecord, tenant, user } from "./fixtures.ts";
import type { StoreUnderTest } from "./store-under-test.ts";

const SHAPES: [name: string, query: string][] = [
  [
    "a page in an order with NULLs: totalCount, pageInfo, offsets",
    `{ jobs(orderBy: "Start DESC, Description", first: 5, offset: 1) { __typename totalCount
       pageInfo { hasNextPage hasPreviousPage } edges { offset node { Description Start Duration } } } }`,
  ],
  [
    "lookups through aliases and fragments, a filter through a lookup",
    `fragment R on Regions { Name Timezone }
     { jobs(filter: "Region.Name == 'North'", orderBy: "Region.Name, Start") { edges { node {
       Name d: Description Region { ...R } Account { Name } } } } }`,
  ],
  [
    "reverse lists three levels deep, filtered, ordered, limited",
    `{ regions(orderBy: "Name DESC") { edges { node { Name
       Jobs(filter: "Duration >= 1", orderBy: "Start, Duration DESC", limit: 3) { Description Start
         JobAllocations { Resource { Name PrimaryRegion { Name } } } }
       Resources { Name } } } } }`,
  ],
  [
    "records by UID, found and not",
    `query One($id: ID!) { a: jobsById(UID: $id) { Description Region { Name } } b: jobsById(UID: "not-a-record") { Name } }`,
  ],
  [
    "filter values holding quotes, backslashes and placeholders' marks; counts in variables",
    `query Hostile($f: String, $n: Int, $o: Int) { jobs(filter: $f, orderBy: "Description", first: $n, offset: $o) {
       totalCount pageInfo { hasNextPage } edges { offset node { Description
         JobAllocations(filter: "Resource.Name != 'it\\\\'s ?'", limit: 2) { Resource { Name } } } } } }`,
  ],
];

/** A description holding what SQL text must keep apart from its own: quotes, a backslash, placeholders' marks. */
const HOSTILE = `it's \\ "q" ? $1 ::text E'x' $$`;

/** The variables of a shape's query (`job`: a job's UID). */
const variablesOf = (query: string, job: string) => {
  if (query.includes("$id")) return { id: job };
  if (!query.includes("$f")) return undefined;
  const eql = HOSTILE.replaceAll("\\", "\\\\").replaceAll("'", "\\'");
  // Only the hostile job has Duration 1 and no Start: nothing else matches what its text must match.
  return { f: `(Description == '${eql}' AND Description LIKE '%? $1 ::%') OR Duration > 1.5`, n: 3, o: 0 };
};

export function describeReadJson(sut: StoreUnderTest): void {
  /** A tenant with the standard objects' storage and an administrator (and its Users record). */
  async function seedStandardTenant() {
    const acme = tenant("acme");
    const admin: User = { ...user(acme.id, "admin"), roles: ["administrator", "scheduler"] };
    const seeded = { tenant: acme, user: admin };
    await sut.store.unitOfWork(async (tx) => {
      await tx.insertTenant(seeded.tenant);
      for (const object of STANDARD_OBJECTS) await tx.ensureObjectStorage(seeded.tenant.id, object);
      await tx.insertUser(seeded.user);
      await insertUserRecord(tx, seeded.user);
    });
    return seeded;
  }

  describe("whole answers as JSON", () => {
    test("readJson answers as the resolvers do, for every shape", async () => {
      // Optional: an engine without it is answered by the resolvers (the coverage test says so).
      const readJson = sut.store.readJson?.bind(sut.store);
      if (!readJson) return;
      const { tenant: acme, user: admin } = await seedStandardTenant();
      // Only the limits are read: the defaults, as the API starts with them.
      const config = loadApiConfig({ REDIS_URL: "redis://unused.invalid", LOG_LEVEL: "silent" });
      const catalogues = createCatalogueService({
        store: sut.store,
        cacheSize: 10,
        limits: { maxFieldsPerObject: config.CUSTOM_MAX_FIELDS_PER_OBJECT },
      });
      const principal: Principal = {
        tenantId: acme.id,
        userId: admin.id,
        username: admin.username,
        roles: admin.roles,
        tokenId: crypto.randomUUID(),
        expiresAt: null,
      };
      const schemas = createTenantSchemas(sut.store, config, () => {});
      const limits = documentLimits(config);
      const log = createLogger("silent");
      const resolvers = createGraphQLService(catalogues, schemas, limits, log, { jit: false });
      const whole = createGraphQLService(catalogues, schemas, limits, log, {
        reads: createReadAnswers(readJson, limits, log),
      });

      const created = await resolvers.execute(principal, {
        query: `mutation { schema {
          n: insertRegions(input: {Name: "North", Timezone: "UTC"}, idAlias: "n")
          s: insertRegions(input: {Name: "South", Timezone: "Europe/Paris"}, idAlias: "s")
          v1: insertResources(input: {Name: "Van 1", PrimaryRegionId: "n"}, idAlias: "v1")
          v2: insertResources(input: {Name: "Van 2", PrimaryRegionId: "s"}, idAlias: "v2")
          acc: insertAccounts(input: {Name: "Acme"}, idAlias: "acc")
          ${Array.from(
            { length: 9 },
            (_, i) => `j${i}: insertJobs(input: {Duration: ${i % 4}, Description: "job ${i}",
              RegionId: "${i % 2 ? "n" : "s"}"${i % 3 ? `, Start: "2024-05-0${i}T10:00:00Z"` : ""}${i % 4 === 3 ? ', AccountId: "acc"' : ""}}, idAlias: "j${i}")
            a${i}: insertJobAllocations(input: {JobId: "j${i}", ResourceId: "${i % 3 ? "v1" : "v2"}"})`,
          ).join("\n")}
        } }`,
      });
      const { data, errors } = created.body as { data: { schema: Record<string, string> }; errors?: unknown };
      expect(errors).toBeUndefined();
      const someJob = data.schema.j3 as string;
      const hostile = await resolvers.execute(principal, {
        query: `mutation Hostile($d: String) { schema {
          insertJobs(input: {Duration: 1, Description: $d, RegionId: "${data.schema.n}"}) } }`,
        variables: { d: HOSTILE },
      });
      expect((hostile.body as { errors?: unknown }).errors).toBeUndefined();
      for (const [name, query] of SHAPES) {
        const variables = variablesOf(query, someJob);
        sut.store.requestArrived();
        const resolved = await resolvers.execute(principal, { query, variables });
        // Read whole several times: an engine may run a statement's first runs otherwise than later ones.
        for (let run = 1; run <= 4; run++) {
          const read = await whole.execute(principal, { query, variables });
          expect({ name, run, status: read.status, readWhole: typeof read.body === "string" }).toEqual({
            name,
            run,
            status: 200,
            readWhole: true,
          });
          // Parsed and printed again: the same members in the same order print the same.
          const text = JSON.stringify(JSON.parse(read.body as string));
          expect({ name, run, text }).toEqual({ name, run, text: JSON.stringify(resolved.body) });
          expect(text).not.toContain('"errors"');
        }
      }

      // Given the catalogue version the tree was made from, the read answers only while the store's
      // catalogue is at it (checked in the read itself): null once a change moved it.
      const tree: ReadNode = { kind: "object", entries: [] };
      const version = await sut.store.catalogueVersion(acme.id);
      expect(await readJson(acme.id, tree, [], version)).toBe("{}");
      await sut.store.unitOfWork((tx) => tx.bumpCatalogueVersion(acme.id));
      expect(await readJson(acme.id, tree, [], version)).toBeNull();
      expect(await readJson(acme.id, tree, [], version + 1)).toBe("{}");
    });
  });
}
