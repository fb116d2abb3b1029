/**
 * A GraphQL subscription document (a webhook's today, a live subscription's
 * next) → the Subscription the matcher reads: the object, the operations, the
 * checked filters and the selection to shape elements with. Pure: the tenant's
 * GraphQL schema (built by the GraphQL feature, passed in) and catalogue in;
 * every problem is reported with a path, as the REST answer's `details`.
 */
import {
  type DocumentNode,
  type FieldNode,
  type GraphQLError,
  type GraphQLObjectType,
  type GraphQLSchema,
  getNamedType,
  Kind,
  type OperationDefinitionNode,
  parse,
  type ValueNode,
  validate,
} from "graphql";
import { collectFields } from "graphql/execution/collectFields.js";
import {
  type ErrorDetail,
  FilterParseError,
  UnknownFieldError,
  ValidationError,
} from "../../common/errors.ts";
import { prepareFilter } from "../eql/check-filter.ts";
import type { CheckedFilter } from "../eql/checked-filter.ts";
import { filterNeeds } from "../eql/filter-needs.ts";
import type { Catalogue, ObjectDef } from "../model/catalogue.ts";
import { memberName } from "../model/member-name.ts";
import { names } from "../model/naming.ts";
import type { ChangeOperation } from "../model/record-values.ts";
import type { Member, Subscription } from "./subscription.ts";

const fail = (details: ErrorDetail[]): never => {
  throw new ValidationError("the subscription is invalid", details);
};

/** @throws ValidationError with a detail per problem. */
export function parseSubscription(query: string, schema: GraphQLSchema, catalogue: Catalogue): Subscription {
  let document: ReturnType<typeof parse>;
  try {
    document = parse(query, { maxTokens: 5000 });
  } catch (error) {
    return fail([{ path: "query", message: (error as GraphQLError).message }]);
  }
  const problems = validate(schema, document);
  if (problems.length > 0) {
    // The filters are checked too where the root field names an object: every problem at once.
    const details = problems.map((p): ErrorDetail => ({ path: "query", message: p.message }));
    for (const root of rootFieldsOf(document)) {
      const object = catalogue.objects.find((o) => names.subscriptionField(o.name) === root.name.value);
      if (!object) continue;
      const args = argumentsOf(root);
      checkFilter(args, "filter", object, catalogue, details);
      checkFilter(args, "extendedFilter", object, catalogue, details);
    }
    return fail(details);
  }
  const operations = document.definitions.filter(
    (d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION,
  );
  const operation = operations[0];
  if (operations.length !== 1 || operation?.operation !== "subscription") {
    return fail([{ path: "query", message: "the query must be exactly one subscription operation" }]);
  }
  if ((operation.variableDefinitions?.length ?? 0) > 0)
    return fail([{ path: "query", message: "subscriptions take no variables" }]);
  const rootType = schema.getSubscriptionType() as GraphQLObjectType;
  const fragments = Object.fromEntries(
    document.definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d]] : [])),
  );
  const roots = [...collectFields(schema, fragments, {}, rootType, operation.selectionSet)];
  if (roots.length !== 1)
    return fail([{ path: "query", message: "select exactly one schema<Object> field" }]);
  const [rootKey, rootNodes] = roots[0] as [string, readonly FieldNode[]];
  const root = rootNodes[0] as FieldNode;
  const object = catalogue.objects.find(
    (o) => names.subscriptionField(o.name) === root.name.value,
  ) as ObjectDef;

  const args = argumentsOf(root);
  const details: ErrorDetail[] = [];
  const filter = checkFilter(args, "filter", object, catalogue, details);
  const extendedFilter = checkFilter(args, "extendedFilter", object, catalogue, details);
  for (const [path, checked] of [
    ["filter", filter],
    ["extendedFilter", extendedFilter],
  ] as const) {
    if (checked && filterNeeds(checked).hasSubquery) {
      details.push({ path, message: "sub-queries (IN (SELECT ...)) are not supported in webhook filters" });
    }
  }
  const operationSet = operationsOf(args.get("operation"), details);
  const eventType = getNamedType(rootType.getFields()[root.name.value]?.type) as GraphQLObjectType;
  const members: Member[] = [];
  for (const node of rootNodes) {
    if (!node.selectionSet) continue;
    for (const [key, [member]] of collectFields(schema, fragments, {}, eventType, node.selectionSet)) {
      const kind = member?.name.value;
      if (kind === "operation" || kind === "timestamp") members.push({ key, kind });
      else if ((kind === "data" || kind === "previous") && member?.selectionSet) {
        const recordType = getNamedType(eventType.getFields()[kind]?.type) as GraphQLObjectType;
        const fields = [...collectFields(schema, fragments, {}, recordType, member.selectionSet)].flatMap(
          ([fieldKey, [fieldNode]]) => {
            const name = fieldNode?.name.value ?? "";
            if (name === "__typename") return [];
            const field = object.fields.find((f) => memberName(f) === name);
            return field ? [{ key: fieldKey, field: field.name }] : [];
          },
        );
        members.push({ key, kind, fields });
      }
    }
  }
  if (details.length > 0) fail(details);
  const data = members.find((m) => m.kind === "data");
  const watched = data && "fields" in data ? data.fields.map((f) => f.field) : [];
  return { object, rootKey, operations: operationSet, filter, extendedFilter, members, watched };
}

type Arguments = ReadonlyMap<string, ValueNode>;

const argumentsOf = (field: FieldNode): Arguments =>
  new Map((field.arguments ?? []).map((arg) => [arg.name.value, arg.value]));

/** The root fields written directly in the document's operations (what a subscription's root should be). */
function rootFieldsOf(document: DocumentNode): FieldNode[] {
  return document.definitions.flatMap((d) =>
    d.kind === Kind.OPERATION_DEFINITION
      ? d.selectionSet.selections.filter((s): s is FieldNode => s.kind === Kind.FIELD)
      : [],
  );
}

/** The filter argument `name` checked against `object`; null (with a detail added) when it is not valid. */
function checkFilter(
  args: Arguments,
  name: "filter" | "extendedFilter",
  object: ObjectDef,
  catalogue: Catalogue,
  details: ErrorDetail[],
): CheckedFilter | null {
  const value = args.get(name);
  if (!value || value.kind === Kind.NULL) return null;
  if (value.kind !== Kind.STRING) {
    details.push({ path: name, message: "must be a string literal" });
    return null;
  }
  try {
    return prepareFilter(value.value, object, catalogue, { mode: name === "filter" ? "filter" : "extended" });
  } catch (error) {
    if (!(error instanceof FilterParseError || error instanceof UnknownFieldError)) throw error;
    const position = error.position;
    details.push({
      path: name,
      message: position ? `${error.message} (offset ${position.offset})` : error.message,
    });
    return null;
  }
}

/**
 * The operations the `operation` argument names; null (every operation) when it is absent. An
 * empty list is a problem (added to `details`): it would match nothing, so the webhook would
 * never fire. A repeated value is harmless: `[INSERT, INSERT]` means INSERT.
 */
function operationsOf(
  value: ValueNode | undefined,
  details: ErrorDetail[],
): ReadonlySet<ChangeOperation> | null {
  if (!value || value.kind === Kind.NULL) return null;
  const list = value.kind === Kind.LIST ? value.values : [value];
  const operations = new Set(list.flatMap((v) => (v.kind === Kind.ENUM ? [v.value as ChangeOperation] : [])));
  if (operations.size === 0)
    details.push({
      path: "operation",
      message:
        "names no operation, so the webhook would never fire; name INSERT, UPDATE or DELETE, or omit it for all",
    });
  return operations;
}
