/**
 * The counts parents keep of their children (a standard behaviour, `countedBy`: Jobs.JobAllocationCount),
 * adjusted after each operation on a counted child, inside the same write, with the parent's own
 * UPDATE change entry.
 */
import type { ObjectDef } from "../model/catalogue.ts";
import type { ChangeEntry } from "../model/record-values.ts";
import { update } from "./apply-operation.ts";
import { behavioursOf, counterDeltas } from "./standard-behaviours.ts";
import type { WriteState } from "./write-state.ts";

/** Applies the count changes implied by `entries` (the changes one operation made to records of `object`). */
export async function adjustParentCounters(
  state: WriteState,
  object: ObjectDef,
  entries: readonly ChangeEntry[],
): Promise<void> {
  const counter = behavioursOf(object).countedBy;
  if (!counter) return;
  const reference = object.fields.find((field) => field.name === counter.reference);
  const parent = state.catalogue.objects.find((candidate) => candidate.name === reference?.referenceTo);
  if (!parent) return;
  const children = entries.filter((entry) => entry.objectName === object.name);
  for (const [uid, delta] of counterDeltas(counter, children)) {
    const record = (await state.tx.findRecords(state.context.tenantId, parent, [uid]))[0];
    if (!record) continue;
    await update(state, parent, record, {
      [counter.counter]: ((record[counter.counter] as number | null) ?? 0) + delta,
    });
  }
}
