/**
 * The change feed's deferred-webhook consumer: a batch of committed changes →
 * the firings of the tenants' deferred webhooks scheduled, moved or cancelled
 * (SPEC.md §11). Each change of a watched object is read for its record's due
 * time before and after (due-time.ts): a new due time is scheduled, one that
 * moved is cancelled and the new one scheduled, a deleted record's cancelled.
 * The filter is not looked at here: it must hold at fire time. Handed a batch
 * again, it schedules the same firings (their job ids are webhook × record ×
 * due time), so nothing fires twice.
 */
import type { LoggedChange } from "../model/record-values.ts";
import { dueTimeOf } from "./due-time.ts";
import type { FeedConsumer } from "./feed-consumer.ts";
import type { FiringWebhook } from "./fire-webhook-event.ts";
import type { DeferredFiring, DeferredFirings } from "./webhook-events.ts";

/** A deferred webhook as the feed schedules by it. */
export type SchedulingWebhook = Pick<FiringWebhook, "object" | "rule"> & { webhookId: string };

export interface DeferredConsumerDeps {
  /** The tenant's enabled deferred webhooks, compiled. */
  deferredForTenant(tenantId: string): Promise<readonly SchedulingWebhook[]>;
  firings: DeferredFirings;
}

/** What one change does to one webhook's firings: those to schedule and those to cancel. Pure. */
export function firingChanges(
  change: LoggedChange,
  webhook: SchedulingWebhook,
): { schedule: DeferredFiring[]; cancel: DeferredFiring[] } {
  const firing = (dueAt: number | null): DeferredFiring[] =>
    dueAt === null
      ? []
      : [{ tenantId: change.tenantId, webhookId: webhook.webhookId, recordUid: change.uid, dueAt }];
  const before = change.before ? dueTimeOf(change.before, webhook.rule) : null;
  const after = change.after ? dueTimeOf(change.after, webhook.rule) : null;
  if (before === after) return { schedule: [], cancel: [] };
  return { schedule: firing(after), cancel: firing(before) };
}

export function createDeferredConsumer({ deferredForTenant, firings }: DeferredConsumerDeps): FeedConsumer {
  return {
    name: "deferred-webhooks",
    async consume(batch) {
      const schedule: DeferredFiring[] = [];
      const cancel: DeferredFiring[] = [];
      for (const [tenantId, changes] of Map.groupBy(batch.entries, (entry) => entry.tenantId)) {
        const webhooks = await deferredForTenant(tenantId);
        if (webhooks.length === 0) continue;
        for (const change of changes) {
          for (const webhook of webhooks) {
            if (webhook.object.name !== change.objectName) continue;
            const planned = firingChanges(change, webhook);
            schedule.push(...planned.schedule);
            cancel.push(...planned.cancel);
          }
        }
      }
      // Cancel first: a record whose due time moved back and forth in one batch keeps its last one.
      await firings.cancel(cancel);
      await firings.schedule(schedule);
    },
  };
}
