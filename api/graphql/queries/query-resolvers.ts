/**
 * Resolvers of the tenant's queries: `x(filter, orderBy, first, after, offset)`
 * connections, `xById`, lookups and reverse lists, the latter two batched (one
 * store query per field per level): lookups joined into their list's statement
 * or collected per tick, reverse lists read for all rows listed together.
 */
import type { GraphQLFieldResolver, GraphQLResolveInfo } from "graphql";
import { whenSettled } from "../../../common/settled.ts";
import type { Catalogue, FieldDef, ObjectDef } from "../../model/catalogue.ts";
import type { RecordValues } from "../../model/record-values.ts";
import { type ListedRecord, LOOKUPS, type Store, type WithLookups } from "../../store/store.ts";
import type { GraphQLContext } from "../graphql-context.ts";
import { createBatchLoader } from "./batch-loader.ts";
import { decodeCursor, encodeCursor } from "./cursor.ts";
import { pageWindow, type QueryLimits, relatedLimit } from "./page-args.ts";
import { prepareArguments } from "./prepared-arguments.ts";
import { EDGE_NODE, joinedLookups, nodesKey, OWN, selectedFields } from "./selected-fields.ts";
import { createSiblingLoader, markBatch } from "./sibling-loader.ts";

type Resolver = GraphQLFieldResolver<RecordValues, GraphQLContext>;

interface ListArgs {
  filter?: string | null;
  orderBy?: string | null;
  first?: number | null;
  after?: string | null;
  offset?: number | null;
  limit?: number | null;
}

export function createQueryResolvers(store: Store, catalogue: Catalogue, limits: QueryLimits) {
  const objectNamed = (name: string) => catalogue.objects.find((object) => object.name === name) as ObjectDef;
  const targetOf = (reference: FieldDef) => objectNamed(reference.referenceTo as string);
  const prepare = (object: ObjectDef, filterText?: string | null, orderText?: string | null) =>
    prepareArguments(catalogue, object, filterText, orderText);

  /** This request's loader of `object` records by UID, reading `fields` (one loader per field list). */
  const byUid = (context: GraphQLContext, object: ObjectDef, fields: readonly FieldDef[]) =>
    context.loaders.get(fields, () =>
      createBatchLoader<string, RecordValues | null>(async (uids) => {
        const records = await store.findRecords(context.principal.tenantId, object, uids, fields);
        markBatch(records);
        return new Map(records.map((record) => [record.UID as string, record]));
      }, null),
    );

  const list =
    (object: ObjectDef): Resolver =>
    (_source, args: ListArgs, context, info) => {
      const { first, offset } = pageWindow(args.first, args.offset, limits);
      const { filter, order, fingerprint } = prepare(object, args.filter, args.orderBy);
      const after = args.after ? decodeCursor(args.after, fingerprint, order) : null;
      const now = Date.now();
      const tenantId = context.principal.tenantId;
      const listed = store.listRecords(tenantId, object, {
        filter,
        order,
        after,
        offset,
        limit: first + 1,
        now,
        fields: selectedFields(object, info.fieldNodes, EDGE_NODE, info.fragments),
        lookups: joinedLookups(object, info.fieldNodes, EDGE_NODE, info.fragments, targetOf),
      });
      return whenSettled(listed, (rows) => {
        const edges = rows.slice(0, first).map((row, i) => new Edge(row, offset + i, fingerprint));
        markBatch(edges.map((edge) => edge.node));
        return {
          edges,
          pageInfo: {
            hasNextPage: rows.length > first,
            hasPreviousPage: after !== null || offset > 0,
            get startCursor() {
              return edges[0]?.cursor ?? null;
            },
            get endCursor() {
              return edges[edges.length - 1]?.cursor ?? null;
            },
          },
          // Called by the default resolver only when `totalCount` is selected.
          totalCount: () => store.countRecords(tenantId, object, filter, now),
        };
      });
    };

  const byId =
    (object: ObjectDef): Resolver =>
    (_source, args: { UID: string }, context, info) =>
      byUid(context, object, selectedFields(object, info.fieldNodes, OWN, info.fragments)).load(args.UID);

  const lookup =
    (field: FieldDef): Resolver =>
    (source, _args, context, info) => {
      // Read with the record when its list joined this lookup.
      const joined = (source as WithLookups)[LOOKUPS];
      if (joined && field.name in joined) return joined[field.name];
      const uid = source[field.name];
      if (typeof uid !== "string") return null;
      const target = objectNamed(field.referenceTo as string);
      return byUid(context, target, selectedFields(target, info.fieldNodes, OWN, info.fragments)).load(uid);
    };

  const reverse =
    (reference: FieldDef): Resolver =>
    (source, args: ListArgs, context, info: GraphQLResolveInfo) => {
      const limit = relatedLimit(args.limit, limits);
      const child = objectNamed(reference.objectName);
      // One loader per field (all its nodes): its arguments are the same for every parent row of this request.
      const loader = context.loaders.get(nodesKey(info.fieldNodes), () => {
        const { filter, order } = prepare(child, args.filter, args.orderBy);
        const fields = selectedFields(child, info.fieldNodes, OWN, info.fragments);
        const lookups = joinedLookups(child, info.fieldNodes, OWN, info.fragments, targetOf);
        return createSiblingLoader<RecordValues[]>((parents) => {
          const listed = store.listRelated(context.principal.tenantId, child, reference, parents, {
            filter,
            order,
            limit,
            now: Date.now(),
            fields,
            lookups,
          });
          return whenSettled(listed, (rows) => {
            markBatch(rows);
            const grouped = new Map<string, RecordValues[]>();
            for (const row of rows) {
              const parent = row[reference.name] as string;
              const siblings = grouped.get(parent);
              if (siblings) siblings.push(row);
              else grouped.set(parent, [row]);
            }
            return grouped;
          });
        }, []);
      });
      return loader.load(source);
    };

  return { list, byId, lookup, reverse };
}

/** An edge of a connection; its cursor is encoded only when asked for. */
class Edge {
  readonly node: RecordValues;
  constructor(
    private readonly row: ListedRecord,
    readonly offset: number,
    private readonly fingerprint: string,
  ) {
    this.node = row.values;
  }
  get cursor(): string {
    return encodeCursor(this.row.sortKey, this.fingerprint);
  }
}
