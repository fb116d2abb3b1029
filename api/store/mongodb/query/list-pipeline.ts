/**
 * Store reads (api/store/ports/records-port.ts) → aggregation pipelines: a page of records
 * (filtered, ordered with NULLs lowest, after a keyset position, skipped, limited, with their
 * sort keys and joined to-one lookups), a count, and the children of many parents with a limit
 * per parent. Every pipeline starts from the layout's scope (one tenant's records of one object),
 * runs under `MQL_COLLATION`, and is checked against the server's limits (server-limits.ts).
 */
import type { Document } from "mongodb";
import type { CheckedFilter } from "../../../eql/checked-filter.ts";
import type { OrderTerm } from "../../../eql/parse-order-by.ts";
import type { FieldDef, ObjectDef } from "../../../model/catalogue.ts";
import type { ListQuery, RelatedQuery } from "../../ports/records-port.ts";
import { valueKey } from "../record-codec.ts";
import { compile, extendedFilterError } from "./compile-condition.ts";
import { keysetQuery, sortSpec } from "./keyset.ts";
import { JOINED_FIELD, type MqlLayout, SORT_KEYS_FIELD } from "./mql-layout.ts";
import { MqlCompilation, MqlScope } from "./mql-scope.ts";
import { ALWAYS, NEVER } from "./query-logic.ts";
import { withinServerLimits } from "./server-limits.ts";

/** A filtered selection of `object`'s records: its stages, and the paths of the order's keys. */
interface Selection {
  scope: MqlScope;
  /** Joins, sub-query probes, then the filter's `$match`. */
  stages: Document[];
  keyPaths: string[];
}

function select(
  object: ObjectDef,
  filter: CheckedFilter | null,
  order: readonly OrderTerm[],
  layout: MqlLayout,
  now: number,
): Selection {
  if (filter && filter.mode !== "filter") throw extendedFilterError();
  const scope = new MqlScope(object, new MqlCompilation(layout, now));
  const match = filter ? compile(filter.condition, true, scope) : ALWAYS;
  // A key read through a lookup is sorted as a computed field, missing (no target) made null: the
  // server sorts missing and null alike anyway, and such a sort cannot use an index. A key of the
  // record's own sorts on its path, which an index can serve.
  const computed: Document = {};
  const keyPaths = order.map((term) => {
    const path = scope.comparablePath(term.operand);
    if (term.operand.hops.length === 0) return path;
    const key = scope.compilation.temporary("o");
    computed[key] = { $ifNull: [`$${path}`, null] };
    return key;
  });
  const stages = [...scope.stages, ...(match === ALWAYS ? [] : [{ $match: match }])];
  if (Object.keys(computed).length > 0) stages.push({ $set: computed });
  return { scope, stages, keyPaths };
}

/** Keeps the UID, only the record fields read (all when absent), the sort keys and the joined lookups. */
function projection(scope: MqlScope, fields: readonly FieldDef[] | undefined, extra: string[]): Document {
  const { valuesPath, uidPath } = scope.layout;
  const kept: Document = { _id: 1, [uidPath]: 1 };
  if (fields) for (const field of fields) kept[`${valuesPath}.${valueKey(field)}`] = 1;
  else kept[valuesPath] = 1;
  for (const name of extra) kept[name] = 1;
  return { $project: kept };
}

/**
 * Stages putting each to-one lookup's target under `JOINED_FIELD.<reference key>`: its document's
 * UID and values (as a listed record's), or null when the reference is empty or dangles.
 */
function joinedLookups(scope: MqlScope, lookups: ListQuery["lookups"]): Document[] {
  if (!lookups || lookups.length === 0) return [];
  const joined: Document = {};
  for (const { reference, target } of lookups) {
    const base = scope.baseOf({ hops: [{ reference, target }] });
    joined[valueKey(reference)] = { $ifNull: [`$${base}`, null] };
  }
  return [{ $set: { [JOINED_FIELD]: joined } }];
}

/**
 * The pipeline of `listRecords`, for the collection of `object`: each result is the record's
 * document (only `query.fields` of its values), its sort-key values under `SORT_KEYS_FIELD` (read
 * them with `readSortKey`, keyset.ts) and its joined lookups under `JOINED_FIELD`.
 * @throws LimitExceededError (server-limits.ts, like-regex.ts); BadRequestError for an extended filter.
 */
export function listPipeline(object: ObjectDef, query: ListQuery, layout: MqlLayout): Document[] {
  const selection = select(object, query.filter, query.order, layout, query.now);
  const { scope, keyPaths } = selection;
  const stagesBefore = scope.stages.length;
  const joined = joinedLookups(scope, query.lookups);
  const lookupJoins = scope.stages.slice(stagesBefore);
  const page: Document[] = [];
  if (query.after) page.push({ $match: keysetQuery(keyPaths, query.order, query.after) });
  page.push({ $sort: sortSpec(keyPaths, query.order) });
  if (query.offset > 0) page.push({ $skip: query.offset });
  // The server refuses `$limit: 0`.
  page.push(query.limit > 0 ? { $limit: query.limit } : { $match: NEVER });
  const keys = { $set: { [SORT_KEYS_FIELD]: keyPaths.map((path) => ({ $ifNull: [`$${path}`, null] })) } };
  return withinServerLimits([
    { $match: layout.scope(object) },
    ...selection.stages,
    ...page,
    // The lookups read for the answer are joined after the page is cut: only `limit` records need them.
    ...lookupJoins,
    keys,
    ...joined,
    projection(scope, query.fields, [SORT_KEYS_FIELD, ...(joined.length > 0 ? [JOINED_FIELD] : [])]),
  ]);
}

/**
 * The pipeline of `countRecords`: one document `{n}`, or none when no record matches.
 * @throws as `listPipeline`.
 */
export function countPipeline(
  object: ObjectDef,
  filter: CheckedFilter | null,
  now: number,
  layout: MqlLayout,
): Document[] {
  const selection = select(object, filter, [], layout, now);
  return withinServerLimits([{ $match: layout.scope(object) }, ...selection.stages, { $count: "n" }]);
}

/**
 * The pipeline of `listRelated`, run on the database (`db.aggregate`), not on a collection: one
 * `$documents` entry per distinct parent, each joined to its first `query.limit` children in the
 * query's order (a `$lookup` per parent, along the reference's index, as PostgreSQL's LATERAL
 * join), then flattened: the children's documents, as `listPipeline` gives them (without sort keys).
 * @throws as `listPipeline`.
 */
export function relatedPipeline(
  object: ObjectDef,
  reference: FieldDef,
  parentUids: readonly string[],
  query: RelatedQuery,
  layout: MqlLayout,
): Document[] {
  const selection = select(object, query.filter, query.order, layout, query.now);
  const { scope, keyPaths } = selection;
  const referencePath = scope.fieldPath("", valueKey(reference));
  const stagesBefore = scope.stages.length;
  const joined = joinedLookups(scope, query.lookups);
  const lookupJoins = scope.stages.slice(stagesBefore);
  const fields =
    query.fields && !query.fields.includes(reference) ? [...query.fields, reference] : query.fields;
  const children = [
    { $match: { $and: [layout.scope(object), { $expr: { $eq: [`$${referencePath}`, "$$parent"] } }] } },
    ...selection.stages,
    { $sort: sortSpec(keyPaths, query.order) },
    query.limit > 0 ? { $limit: query.limit } : { $match: NEVER },
    ...lookupJoins,
    ...joined,
    projection(scope, fields, joined.length > 0 ? [JOINED_FIELD] : []),
  ];
  const parents = [...new Set(parentUids)].map((uid) => ({ parent: uid }));
  return withinServerLimits([
    { $documents: parents },
    {
      $lookup: {
        from: layout.collection(object),
        let: { parent: "$parent" },
        pipeline: children,
        as: "child",
      },
    },
    { $unwind: "$child" },
    { $replaceWith: "$child" },
  ]);
}
