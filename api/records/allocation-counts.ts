/**
 * Jobs.JobAllocationCount (read-only, derived): the number of the job's
 * allocations whose Status is not Deleted, kept current inside the write
 * that changes allocations, with the job's own UPDATE change entry.
 */
import type { ObjectDef } from "../model/catalogue.ts";
import type { ChangeEntry, RecordValues } from "../model/record-values.ts";
import { update, type WriteState } from "./apply-operation.ts";

const counts = (record: RecordValues | null) =>
  record !== null && record.Status !== "Deleted" && typeof record.Job === "string";

/** Applies the count changes implied by `entries` (the allocation changes of one operation). */
export async function adjustAllocationCounts(
  state: WriteState,
  entries: readonly ChangeEntry[],
): Promise<void> {
  const deltas = new Map<string, number>();
  for (const entry of entries) {
    if (entry.objectName !== "JobAllocations") continue;
    if (counts(entry.before))
      deltas.set(entry.before?.Job as string, (deltas.get(entry.before?.Job as string) ?? 0) - 1);
    if (counts(entry.after))
      deltas.set(entry.after?.Job as string, (deltas.get(entry.after?.Job as string) ?? 0) + 1);
  }
  const jobs = state.catalogue.objects.find(
    (object) => object.name === "Jobs" && !object.custom,
  ) as ObjectDef;
  for (const [uid, delta] of deltas) {
    if (delta === 0) continue;
    const job = (await state.tx.findRecords(state.context.tenantId, jobs, [uid]))[0];
    if (!job) continue;
    await update(state, jobs, job, {
      JobAllocationCount: ((job.JobAllocationCount as number | null) ?? 0) + delta,
    });
  }
}
