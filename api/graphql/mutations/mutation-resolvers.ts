/**
 * Resolvers of `mutation { schema { ... } }`. The `schema` field plans every
 * operation of its selection (aliases, fragments and @skip/@include honoured,
 * arguments coerced by graphql-js) and runs them as one unit of work; each
 * operation field then answers its own UID, or the error that stopped the
 * mutation (its path is `schema.<alias>`).
 */
import { type GraphQLFieldResolver, GraphQLObjectType, getNamedType } from "graphql";
import { collectFields } from "graphql/execution/collectFields.js";
import { getArgumentValues } from "graphql/execution/values.js";
import type { Catalogue, ObjectDef } from "../../catalogue/catalogue.ts";
import type { Store } from "../../store/store.ts";
import type { GraphQLContext } from "../graphql-context.ts";
import { names } from "../schema/naming.ts";
import { OperationFailure, type OperationKind, type PlannedOperation } from "./operation.ts";
import { runMutation } from "./run-mutation.ts";

type Resolver = GraphQLFieldResolver<unknown, GraphQLContext>;

/** The resolver of `Mutation.schema` for one tenant's catalogue. */
export function mutationsResolver(store: Store, catalogue: Catalogue, onCommitted: () => void): Resolver {
  const byField = new Map<string, { kind: OperationKind; object: ObjectDef }>();
  for (const object of catalogue.objects) {
    byField.set(names.insertField(object.name), { kind: "insert", object });
    byField.set(names.updateField(object.name), { kind: "update", object });
    byField.set(names.upsertField(object.name), { kind: "upsert", object });
    byField.set(names.deleteField(object.name), { kind: "delete", object });
  }

  return async (_source, _args, context, info) => {
    const type = getNamedType(info.returnType);
    if (!(type instanceof GraphQLObjectType)) throw new Error("Mutation.schema must return an object type");
    const operations: PlannedOperation[] = [];
    for (const node of info.fieldNodes) {
      if (!node.selectionSet) continue;
      const fields = collectFields(info.schema, info.fragments, info.variableValues, type, node.selectionSet);
      for (const [alias, fieldNodes] of fields) {
        const first = fieldNodes[0];
        const target = first ? byField.get(first.name.value) : undefined;
        const definition = first ? type.getFields()[first.name.value] : undefined;
        if (!first || !target || !definition) continue;
        const args = getArgumentValues(definition, first, info.variableValues);
        operations.push({
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
    const context_ = {
      tenantId: context.principal.tenantId,
      userId: context.principal.userId,
      mutationId: Bun.randomUUIDv7(),
      now: Date.now(),
    };
    try {
      const results = await runMutation(store, catalogue, context_, operations);
      onCommitted();
      return Object.fromEntries(results);
    } catch (error) {
      if (!(error instanceof OperationFailure)) throw error;
      return { [error.alias]: error.error instanceof Error ? error.error : new Error(String(error.error)) };
    }
  };
}

/** Resolver of each operation field: its UID, or the error that stopped the mutation. */
export const operationResultResolver: Resolver = (source, _args, _context, info) => {
  const value = (source as Record<string, unknown>)[String(info.path.key)];
  if (value instanceof Error) throw value;
  return value ?? null;
};
