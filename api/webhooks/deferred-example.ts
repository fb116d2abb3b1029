/**
 * An example firing of a deferred webhook (what POST /webhooks/{id}/test sends
 * for one): the compiled webhook in, the element a real firing's body holds out,
 * `{data: {<rootKey>: node}}`, the node answered by the webhook's own read
 * query. The query runs through graphql-js on the tenant's types with example
 * resolvers instead of the store's: every record is an example record (a value
 * of each field's type), a lookup its target's example record, a relationship
 * a list of one example child. So aliases, fragments, directives, `__typename`
 * and the scalars' wire forms come out as a query answers them. Pure: the
 * catalogue and the time come in.
 */
import { executeSync, parse } from "graphql";
import { buildTenantSchema } from "../graphql/schema/build-schema.ts";
import type { Catalogue, ObjectDef } from "../model/catalogue.ts";
import { names } from "../model/naming.ts";
import type { RecordValues } from "../model/record-values.ts";
import { EXAMPLE_UID, exampleValue } from "../subscriptions/example-event.ts";
import type { DeferredWebhook } from "./deferred-webhook.ts";

/** An example record of `object` at `at` (ms), keyed by field name as stored records are. */
function exampleRecord(object: ObjectDef, at: number): RecordValues {
  const values: RecordValues = {};
  for (const field of object.fields) values[field.name] = exampleValue(field, at);
  return values;
}

/**
 * The element a firing of `webhook` would send for an example record at `at` (ms).
 * @throws Error when the read query does not answer (the webhook no longer fits the catalogue:
 * compile it against the current one first, which throws the ValidationError to show).
 */
export function exampleDeferredElement(webhook: DeferredWebhook, catalogue: Catalogue, at: number): unknown {
  const objectNamed = (name: string) => catalogue.objects.find((o) => o.name === name) as ObjectDef;
  const schema = buildTenantSchema(catalogue, {
    list: (object) => () => ({
      edges: [{ cursor: "example", offset: 0, node: exampleRecord(object, at) }],
      pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: null, endCursor: null },
      totalCount: 1,
    }),
    lookup: (field) => () => exampleRecord(objectNamed(field.referenceTo as string), at),
    reverse: (field) => () => [exampleRecord(objectNamed(field.objectName), at)],
  });
  const answer = executeSync({
    schema,
    document: parse(webhook.readQuery),
    variableValues: { filter: `UID == '${EXAMPLE_UID}'` },
  });
  const list = names.listField(webhook.object.name);
  const node = (answer.data?.[list] as { edges: { node: unknown }[] } | undefined)?.edges[0]?.node;
  if (answer.errors?.length || node === undefined)
    throw new Error(
      `deferred example did not answer: ${(answer.errors ?? []).map((e) => e.message).join("; ")}`,
    );
  return { data: { [webhook.rootKey]: node } };
}
