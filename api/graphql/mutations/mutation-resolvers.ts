/**
 * Resolvers of `mutation { schema { ... } }`. One request is one unit of work
 * whatever its shape: the first `schema` root resolved plans the operations of
 * every `schema` root of the operation (aliases, fragments and @skip/@include
 * honoured, arguments coerced by graphql-js), in document order, and runs them
 * together; each root then answers its part. Each operation field answers its
 * own UID, or the error that stopped the mutation (its path is
 * `<root>.<alias>`). The writing itself is the record-write engine's
 * (api/records/): this file only translates GraphQL into its operations and
 * its results back.
 */
import {
  type FieldNode,
  type GraphQLFieldResolver,
  GraphQLObjectType,
  type GraphQLResolveInfo,
  getNamedType,
} from "graphql";
import { collectFields } from "graphql/execution/collectFields.js";
import { getArgumentValues } from "graphql/execution/values.js";
import type { Catalogue, ObjectDef } from "../../model/catalogue.ts";
import { names } from "../../model/naming.ts";
import { OperationFailure, type OperationKind } from "../../records/record-operation.ts";
import { writeRecords } from "../../records/write-records.ts";
import type { Store } from "../../store/store.ts";
import type { GraphQLContext } from "../graphql-context.ts";
import type { PlannedOperation } from "./planned-operation.ts";

type Resolver = GraphQLFieldResolver<unknown, GraphQLContext>;

/** Each root's answer by its response key: operation alias → UID, null, or the error that stopped the mutation. */
type RootAnswers = Map<string, Record<string, unknown>>;

/** The resolver of `Mutation.schema` for one tenant's catalogue. */
export function mutationsResolver(
  store: Store,
  catalogue: Catalogue,
  onCommitted: (tenantId: string) => void,
): Resolver {
  const byField = new Map<string, { kind: OperationKind; object: ObjectDef }>();
  for (const object of catalogue.objects) {
    byField.set(names.insertField(object.name), { kind: "insert", object });
    byField.set(names.updateField(object.name), { kind: "update", object });
    byField.set(names.upsertField(object.name), { kind: "upsert", object });
    byField.set(names.deleteField(object.name), { kind: "delete", object });
  }

  /** The operations selected under `nodes` (one root's field nodes), in order. */
  const planRoot = (info: GraphQLResolveInfo, root: string, nodes: readonly FieldNode[]) => {
    const type = getNamedType(info.returnType);
    if (!(type instanceof GraphQLObjectType)) throw new Error("Mutation.schema must return an object type");
    const operations: PlannedOperation[] = [];
    for (const node of nodes) {
      if (!node.selectionSet) continue;
      const fields = collectFields(info.schema, info.fragments, info.variableValues, type, node.selectionSet);
      for (const [alias, fieldNodes] of fields) {
        const first = fieldNodes[0];
        const target = first ? byField.get(first.name.value) : undefined;
        const definition = first ? type.getFields()[first.name.value] : undefined;
        if (!first || !target || !definition) continue;
        const args = getArgumentValues(definition, first, info.variableValues);
        operations.push({
          root,
          alias,
          kind: target.kind,
          object: target.object,
          input:
            (args.input as Record<string, unknown> | undefined) ?? (target.kind === "insert" ? {} : null),
          uid: args.UID as string | undefined,
          keyField: args.keyField as string | undefined,
          idAlias: args.idAlias as string | null | undefined,
        });
      }
    }
    return operations;
  };

  /** Plans and runs the operations of every `schema` root of the request's operation, as one unit of work. */
  const runOperation = async (context: GraphQLContext, info: GraphQLResolveInfo): Promise<RootAnswers> => {
    const roots = collectFields(
      info.schema,
      info.fragments,
      info.variableValues,
      info.parentType,
      info.operation.selectionSet,
    );
    const answers: RootAnswers = new Map();
    const operations: PlannedOperation[] = [];
    for (const [root, nodes] of roots) {
      if (nodes[0]?.name.value !== info.fieldName) continue;
      answers.set(root, {});
      operations.push(...planRoot(info, root, nodes));
    }
    const mutation = {
      tenantId: context.principal.tenantId,
      userId: context.principal.userId,
      mutationId: Bun.randomUUIDv7(),
      now: Date.now(),
      requestId: context.requestId,
    };
    try {
      const results = await writeRecords(store, catalogue, mutation, operations);
      onCommitted(mutation.tenantId);
      operations.forEach((op, i) => {
        (answers.get(op.root) as Record<string, unknown>)[op.alias] = results[i];
      });
    } catch (error) {
      if (!(error instanceof OperationFailure)) throw error;
      const { root, alias } = operations[error.index] as PlannedOperation;
      const cause = error.error instanceof Error ? error.error : new Error(String(error.error));
      (answers.get(root) as Record<string, unknown>)[alias] = cause;
    }
    return answers;
  };

  return async (_source, _args, context, info) => {
    // Keyed by the operation node: every root of this request shares the one run.
    const run = context.loaders.get(info.operation, () => runOperation(context, info));
    return (await run).get(String(info.path.key)) ?? {};
  };
}

/** Resolver of each operation field: its UID, or the error that stopped the mutation. */
export const operationResultResolver: Resolver = (source, _args, _context, info) => {
  const value = (source as Record<string, unknown>)[String(info.path.key)];
  if (value instanceof Error) throw value;
  return value ?? null;
};
