/**
 * Answers a query by reading it whole in the store (`Store.readJson`) where
 * the store can: the read plan made once per document, operation and values
 * of its shaping variables; the slots filled per request. Null means the
 * resolvers answer: no plan, a variable or argument they would refuse, or a
 * record that breaks the schema's promises (the store's read then fails);
 * or, for a catalogue not checked against the store yet, that the store's
 * is at another version (or the read failed: the caller checks). A read the
 * store refused for its bounds (LimitExceededError, UnavailableError) throws.
 */
import { type GraphQLSchema, getVariableValues, type OperationDefinitionNode } from "graphql";
import { LimitExceededError, UnavailableError } from "../../../common/errors.ts";
import { describeError, type Logger } from "../../../common/log.ts";
import type { Catalogue } from "../../model/catalogue.ts";
import type { ReadValue } from "../../store/read-tree.ts";
import type { Store } from "../../store/store.ts";
import type { CachedDocument } from "../document-cache.ts";
import { planBytes } from "../document-size.ts";
import type { QueryLimits } from "./page-args.ts";
import { planRead, shapingVariables, type Variables } from "./read-plan.ts";

/** Plans kept per operation, one per distinct value of its shaping variables. */
const PLANS_PER_OPERATION = 100;

export type ReadAnswers = ReturnType<typeof createReadAnswers>;

export function createReadAnswers(
  readJson: NonNullable<Store["readJson"]>,
  limits: QueryLimits,
  log: Logger,
) {
  return {
    /**
     * The answer's `data` as JSON text, or null when the resolvers must answer; `unchecked` when
     * `catalogue` was not checked against the store's version: then the read checks it.
     * @throws LimitExceededError (a statement past the store's time limit) or UnavailableError (the
     * tenant's share of the store busy), which the resolvers would meet again.
     */
    async data(
      tenantId: string,
      catalogue: Catalogue,
      schema: GraphQLSchema,
      prepared: CachedDocument,
      operation: OperationDefinitionNode,
      inputs: Record<string, unknown> | null | undefined,
      unchecked = false,
    ): Promise<string | null> {
      if (operation.operation !== "query") return null;
      const definitions = operation.variableDefinitions ?? [];
      let variables: Variables = {};
      if (definitions.length > 0) {
        const coerced = getVariableValues(schema, definitions, inputs ?? {});
        if (coerced.errors) return null;
        variables = coerced.coerced;
      }
      const name = operation.name?.value ?? "";
      let reads = prepared.reads.get(name);
      if (!reads) {
        reads = { shapedBy: shapingVariables(prepared.document), plans: new Map() };
        prepared.reads.set(name, reads);
      }
      const key =
        reads.shapedBy.length === 0 ? "" : JSON.stringify(reads.shapedBy.map((v) => variables[v] ?? null));
      let plan = reads.plans.get(key);
      if (plan === undefined) {
        plan = planRead(catalogue, limits, prepared.document, operation, variables);
        if (reads.plans.size >= PLANS_PER_OPERATION) {
          const oldest = reads.plans.keys().next().value as string;
          reads.plans.delete(oldest);
          prepared.account(-planBytes(prepared.document, operation, oldest));
        }
        reads.plans.set(key, plan);
        prepared.account(planBytes(prepared.document, operation, key));
      }
      if (!plan) return null;
      let values: ReadValue[];
      try {
        values = plan.slots.map((fill) => fill(variables));
      } catch {
        return null;
      }
      try {
        return await readJson(tenantId, plan.tree, values, unchecked ? catalogue.version : undefined);
      } catch (error) {
        // The store's own bounds (a statement past its time limit, the tenant's share of the pool
        // taken): the resolvers would meet them again, after as long, so they are the answer.
        if (error instanceof LimitExceededError || error instanceof UnavailableError) throw error;
        // Expected for records that break the schema (the resolvers then answer with the error).
        log.debug("query answered by the resolvers: the store's whole read failed", describeError(error));
        return null;
      }
    },
  };
}
