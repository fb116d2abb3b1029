/**
 * A deferred webhook's definition (SPEC.md §11) → what the feed and the firing
 * read: its object, its due rule, the filter that must hold at fire time and
 * the tenant query that reads a record as its body shows it. The query is
 * written against the deferred schema (`buildDeferredSchema`, served as SDL at
 * `GET /webhooks/deferred/schema`): `subscription { <objects>[(filter: "…")] {
 * <fields and relationships> } }`, the object types being the tenant's own, so
 * the body is what a query answers. Pure: the tenant's schema and catalogue in.
 */
import {
  type FieldNode,
  type GraphQLError,
  GraphQLObjectType,
  GraphQLSchema,
  GraphQLString,
  Kind,
  type OperationDefinitionNode,
  parse,
  print,
  validate,
} from "graphql";
import {
  type ErrorDetail,
  FilterParseError,
  UnknownFieldError,
  ValidationError,
} from "../../common/errors.ts";
import { prepareFilter } from "../eql/check-filter.ts";
import type { DueRule, OffsetFieldType } from "../feed/due-time.ts";
import type { Catalogue, ObjectDef } from "../model/catalogue.ts";
import { names } from "../model/naming.ts";
import type { DeferredOptions } from "../store/store.ts";

/** Fields whose instant is the write itself: an offset from them below the minimum would fire on the write. */
const WRITE_INSTANTS = new Set(["CreatedDate", "LastModifiedDate"]);

/** A deferred webhook compiled: what the feed schedules by and the firing reads with. */
export interface DeferredWebhook {
  webhookId: string;
  object: ObjectDef;
  rule: DueRule;
  /** The response key of the body's element (`jobs`, or the query's alias). */
  rootKey: string;
  /** The filter text that must hold at fire time (the query's and the definition's, both), or null. */
  filter: string | null;
  /**
   * A tenant query with one variable, `$filter`, answering `{ <list>: { edges: [{ node }] } }` with
   * the record's selected fields; the firing passes `UID == '<uid>'` and the filter.
   */
  readQuery: string;
}

/** The deferred schema of a tenant: one subscription field per object, on the tenant's own object types. */
export function buildDeferredSchema(tenantSchema: GraphQLSchema, catalogue: Catalogue): GraphQLSchema {
  const fields = Object.fromEntries(
    [...catalogue.objects]
      .sort((a, b) => a.name.localeCompare(b.name))
      .map((object) => [
        names.listField(object.name),
        {
          type: tenantSchema.getType(object.name) as GraphQLObjectType,
          description: `A ${object.name} record when it is due; an EQL filter must hold at fire time.`,
          args: { filter: { type: GraphQLString } },
        },
      ]),
  );
  return new GraphQLSchema({
    // GraphQL asks for a query root; deferred webhooks only ever read through the subscription.
    query: new GraphQLObjectType({
      name: "Query",
      fields: {
        deferredSchema: { type: GraphQLString, description: "Unused: deferred queries are subscriptions." },
      },
    }),
    subscription: new GraphQLObjectType({ name: "Subscription", fields }),
  });
}

/** A filter's problem as a detail at `path`; null when the text checks. */
function filterProblem(
  text: string,
  object: ObjectDef,
  catalogue: Catalogue,
  path: string,
): ErrorDetail | null {
  try {
    prepareFilter(text, object, catalogue, { mode: "filter" });
    return null;
  } catch (error) {
    if (!(error instanceof FilterParseError || error instanceof UnknownFieldError)) throw error;
    const at = error.position ? ` (offset ${error.position.offset})` : "";
    return { path, message: `${error.message}${at}` };
  }
}

/** The due rule of `options` on `object`, problems added to `details`. */
function ruleOf(
  options: DeferredOptions,
  object: ObjectDef,
  minOffsetMs: number,
  details: ErrorDetail[],
): DueRule {
  const instant = object.fields.find((f) => f.name === options.field);
  if (!instant) details.push({ path: "field", message: `${object.name} has no field '${options.field}'` });
  else if (instant.type !== "datetime")
    details.push({
      path: "field",
      message: `'${options.field}' is a ${instant.type} field, not an Instant (datetime)`,
    });
  let offset: DueRule["offset"];
  if (typeof options.offset === "number") offset = options.offset;
  else {
    const named = options.offset.field;
    const field = object.fields.find((f) => f.name === named);
    const type = field?.type;
    if (type !== "int" && type !== "decimal" && type !== "duration") {
      details.push({
        path: "offset.field",
        message: field
          ? `'${named}' is a ${type} field, not an Int, Decimal or Duration`
          : `${object.name} has no field '${named}'`,
      });
    }
    offset = {
      field: named,
      type: type as OffsetFieldType,
      ...(options.offset.default === undefined ? {} : { default: options.offset.default }),
    };
  }
  if (WRITE_INSTANTS.has(options.field)) {
    // An offset read from a field is known only per record; its default is what can be checked here.
    const fixed = typeof offset === "number" ? offset : offset.default;
    if (fixed !== undefined && fixed < minOffsetMs)
      details.push({
        path: typeof offset === "number" ? "offset" : "offset.default",
        message: `an offset from ${options.field} must be at least ${minOffsetMs} ms`,
      });
  }
  return { field: options.field, offset };
}

/**
 * Checks a deferred webhook's definition against the tenant and compiles it.
 * `minOffsetMs`: the least offset from CreatedDate/LastModifiedDate (5000 by default).
 * @throws ValidationError with a detail per problem.
 */
export function parseDeferredWebhook(
  webhookId: string,
  query: string,
  options: DeferredOptions,
  deferredSchema: GraphQLSchema,
  catalogue: Catalogue,
  minOffsetMs: number,
): DeferredWebhook {
  const fail = (details: ErrorDetail[]): never => {
    throw new ValidationError("the deferred webhook is invalid", details);
  };
  let document: ReturnType<typeof parse>;
  try {
    document = parse(query, { maxTokens: 5000 });
  } catch (error) {
    return fail([{ path: "query", message: (error as GraphQLError).message }]);
  }
  const problems = validate(deferredSchema, document);
  if (problems.length > 0) return fail(problems.map((p) => ({ path: "query", message: p.message })));
  const operations = document.definitions.filter(
    (d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION,
  );
  const operation = operations[0];
  if (operations.length !== 1 || operation?.operation !== "subscription")
    return fail([{ path: "query", message: "the query must be exactly one subscription operation" }]);
  if ((operation.variableDefinitions?.length ?? 0) > 0)
    return fail([{ path: "query", message: "deferred queries take no variables" }]);
  const roots = operation.selectionSet.selections;
  const root = roots[0];
  if (roots.length !== 1 || root?.kind !== Kind.FIELD || !root.selectionSet)
    return fail([{ path: "query", message: "select exactly one <objects> field, written directly" }]);
  const object = catalogue.objects.find((o) => names.listField(o.name) === root.name.value) as ObjectDef;
  const details: ErrorDetail[] = [];
  const rule = ruleOf(options, object, minOffsetMs, details);
  const filters: string[] = [];
  const argument = (root as FieldNode).arguments?.find((a) => a.name.value === "filter")?.value;
  if (argument && argument.kind !== Kind.NULL) {
    if (argument.kind !== Kind.STRING)
      details.push({ path: "query", message: "filter must be a string literal" });
    else {
      const problem = filterProblem(argument.value, object, catalogue, "query.filter");
      problem ? details.push(problem) : filters.push(argument.value);
    }
  }
  if (options.filter !== undefined) {
    const problem = filterProblem(options.filter, object, catalogue, "filter");
    problem ? details.push(problem) : filters.push(options.filter);
  }
  if (details.length > 0) fail(details);
  const fragments = document.definitions.filter((d) => d.kind === Kind.FRAGMENT_DEFINITION).map(print);
  const readQuery = [
    `query DeferredFiring($filter: String) { ${names.listField(object.name)}(filter: $filter, first: 1) { edges { node ${print(root.selectionSet)} } } }`,
    ...fragments,
  ].join("\n");
  return {
    webhookId,
    object,
    rule,
    rootKey: root.alias?.value ?? root.name.value,
    filter: filters.length === 0 ? null : filters.map((f) => `(${f})`).join(" AND "),
    readQuery,
  };
}
