/** GraphQL helpers for tests: post a document as a tenant, read a tenant's records and change log from the store. */
import type { ObjectDef } from "../../api/model/catalogue.ts";
import type { TestApp } from "./app.ts";
import { partitionOf } from "./change-log.ts";

export function graphqlClient(t: TestApp, token: string) {
  return async (query: string, variables?: Record<string, unknown>) => {
    const { status, body } = await t.call("POST", "/graphql/graphql", { token, body: { query, variables } });
    if (status !== 200) throw new Error(`GraphQL answered HTTP ${status}: ${JSON.stringify(body)}`);
    return body as {
      data: Record<string, unknown> | null;
      errors?: { message: string; path?: string[]; extensions: Record<string, unknown> }[];
    };
  };
}

/** The stored records of `objectName` for these UIDs. */
export async function storedRecords(t: TestApp, tenantId: string, objectName: string, uids: string[]) {
  const catalogue = await t.catalogues.get(tenantId);
  const object = catalogue.objects.find((o) => o.name === objectName) as ObjectDef;
  return t.store.findRecords(tenantId, object, uids);
}

/** Every change-log entry of a tenant, in commit order. */
export async function changeLog(t: TestApp, tenantId: string) {
  const { entries } = await t.store.readChanges(partitionOf(t.store, tenantId), null, 100_000);
  return entries.filter((entry) => entry.tenantId === tenantId);
}
