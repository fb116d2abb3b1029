/**
 * The record-write engine: record operations in, the UID each touched out. The operations of one
 * write run in order in one unit of work, and their change-log entries are appended in the same
 * transaction; the first failure rolls everything back and is reported with its operation's index.
 */
import { CatalogueChangedError } from "../../common/errors.ts";
import type { Catalogue } from "../model/catalogue.ts";
import type { Store, StoreWriter } from "../store/store.ts";
import { applyOperation } from "./apply-operation.ts";
import { adjustParentCounters } from "./parent-counters.ts";
import { OperationFailure, type RecordOperation, type WriteContext } from "./record-operation.ts";
import type { WriteState } from "./write-state.ts";

/**
 * Runs `operations` as one unit of work of their own.
 * @returns the UID (or null) of each operation, in order.
 * @throws OperationFailure naming the failing operation (nothing written).
 */
export async function writeRecords(
  store: Store,
  catalogue: Catalogue,
  context: WriteContext,
  operations: readonly RecordOperation[],
): Promise<(string | null)[]> {
  return await store.unitOfWork((tx) => writeRecordsIn(tx, catalogue, context, operations));
}

/**
 * Runs `operations` inside the caller's unit of work `tx` (with its other writes: a user's record
 * with the user), appending their change-log entries to it. They run only on the catalogue they
 * were made for: when another request changed it since (a field deleted, or added again with
 * another type), nothing is written and the caller is told so.
 * @returns the UID (or null) of each operation, in order.
 * @throws OperationFailure naming the failing operation, or CatalogueChangedError; the caller's
 *   unit of work rolls back.
 */
export async function writeRecordsIn(
  tx: StoreWriter,
  catalogue: Catalogue,
  context: WriteContext,
  operations: readonly RecordOperation[],
): Promise<(string | null)[]> {
  // Read before any write, and awaited: a MongoDB session runs one operation at a time.
  if ((await tx.catalogueVersion(catalogue.tenantId)) !== catalogue.version)
    throw new CatalogueChangedError();
  const state: WriteState = { tx, catalogue, context, aliases: new Map(), changes: [] };
  const results: (string | null)[] = [];
  for (const [index, op] of operations.entries()) {
    try {
      const firstChange = state.changes.length;
      results.push(await applyOperation(state, op));
      await adjustParentCounters(state, op.object, state.changes.slice(firstChange));
    } catch (error) {
      throw new OperationFailure(index, error);
    }
  }
  await tx.appendChanges(state.changes);
  return results;
}
