/**
 * Runs every operation of one mutation request, in order, in one unit of
 * work, and appends their change-log entries in the same transaction. The
 * first failure rolls everything back and is reported with its operation.
 */
import type { Catalogue } from "../../model/catalogue.ts";
import type { Store } from "../../store/store.ts";
import { adjustAllocationCounts } from "./allocation-counts.ts";
import { applyOperation, type MutationState } from "./apply-operation.ts";
import { type MutationContext, OperationFailure, type PlannedOperation } from "./operation.ts";

/** @returns the UID (or null) of each operation, in order. @throws OperationFailure naming the failing operation. */
export async function runMutation(
  store: Store,
  catalogue: Catalogue,
  context: MutationContext,
  operations: readonly PlannedOperation[],
): Promise<(string | null)[]> {
  return await store.unitOfWork(async (tx) => {
    const state: MutationState = { tx, catalogue, context, aliases: new Map(), changes: [] };
    const results: (string | null)[] = [];
    for (const op of operations) {
      try {
        const firstChange = state.changes.length;
        results.push(await applyOperation(state, op));
        if (op.object.name === "JobAllocations" && !op.object.custom) {
          await adjustAllocationCounts(state, state.changes.slice(firstChange));
        }
      } catch (error) {
        throw new OperationFailure(op, error);
      }
    }
    await tx.appendChanges(state.changes);
    return results;
  });
}
