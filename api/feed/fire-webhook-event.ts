/**
 * A webhook event that is not a mutation (a schedule tick, a deferred firing)
 * → its delivery, logged pending and enqueued exactly as the change feed does
 * a mutation's: one delivery per webhook × event (`tick:<ms>`,
 * `deferred:<uid>:<dueMs>`), so a firing handled twice (a retry, two
 * processes) logs and enqueues it once. A deferred firing is skipped, with a
 * log line, when its record is gone, its due time has moved (the moved one
 * has a firing of its own) or its filter no longer holds.
 */
import { type DeliveryEvent, type DeliveryJob, deliveryIdOf, eventIdOf } from "../../common/delivery-job.ts";
import type { Logger } from "../../common/log.ts";
import type { ObjectDef } from "../model/catalogue.ts";
import type { DeliveryRecord, Store } from "../store/store.ts";
import { type DueRule, dueTimeOf } from "./due-time.ts";
import type { WebhookEvent, WebhookSchedules } from "./webhook-events.ts";

/** A deferred webhook as its firing needs it (compiled by api/webhooks/deferred-webhook.ts). */
export interface FiringWebhook {
  object: ObjectDef;
  rule: DueRule;
  /** The body element's key (`jobs`). */
  rootKey: string;
  /** Reads the record as the webhook's query selects it, when `filter` holds for it; null otherwise. */
  read(recordUid: string): Promise<Record<string, unknown> | null>;
}

export interface FireWebhookEventDeps {
  store: Store;
  /** The tenant's enabled deferred webhook with this id, compiled; null when there is none. */
  deferredWebhook(tenantId: string, webhookId: string): Promise<FiringWebhook | null>;
  /** Puts jobs on the delivery queue (idempotent per job id). */
  enqueue(jobs: DeliveryJob[]): Promise<void>;
  schedules: WebhookSchedules;
  log: Logger;
  now?: () => number;
}

/** The event's delivery job (its body as given) and its pending row in the delivery log. */
function deliveryOf(
  tenantId: string,
  webhookId: string,
  event: DeliveryEvent,
  at: number,
  body: DeliveryJob["body"],
  now: number,
): { job: DeliveryJob; row: DeliveryRecord } {
  const eventId = eventIdOf(event);
  const job: DeliveryJob = {
    tenantId,
    webhookId,
    eventId,
    deliveryId: deliveryIdOf(webhookId, eventId, at),
    body,
    committedAt: at,
  };
  const row: DeliveryRecord = {
    tenantId,
    id: job.deliveryId,
    webhookId,
    eventId,
    part: 0,
    status: "pending",
    body: JSON.stringify(body),
    test: false,
    attempts: 0,
    committedAt: at,
    createdAt: now,
    updatedAt: now,
  };
  return { job, row };
}

export function createWebhookEventHandler(deps: FireWebhookEventDeps) {
  const { store, enqueue, log, now = Date.now } = deps;

  async function deliver(delivery: { job: DeliveryJob; row: DeliveryRecord }): Promise<void> {
    // The row before the job: the dispatcher logs each attempt against it. Both are idempotent.
    await store.unitOfWork((tx) => tx.insertDeliveries([delivery.row]));
    await enqueue([delivery.job]);
  }

  async function tick(event: Extract<WebhookEvent, { kind: "tick" }>): Promise<void> {
    const { tenantId, webhookId, at } = event;
    const webhook = await store.findWebhook(tenantId, webhookId);
    if (webhook?.type !== "scheduled") {
      // Deleted (or changed kind) while its scheduler lived on: the scheduler goes too.
      await deps.schedules.remove(webhookId);
      return;
    }
    if (!webhook.enabled) {
      log.info("schedule tick skipped: the webhook is disabled", { tenantId, webhookId, at });
      return;
    }
    await deliver(deliveryOf(tenantId, webhookId, { kind: "tick", at }, at, {}, now()));
  }

  async function fire(event: Extract<WebhookEvent, { kind: "deferred" }>): Promise<void> {
    const { tenantId, webhookId, recordUid, dueAt } = event;
    const skipped = (reason: string) =>
      log.info("deferred firing skipped", { tenantId, webhookId, recordUid, dueAt, reason });
    const webhook = await deps.deferredWebhook(tenantId, webhookId);
    if (!webhook) return skipped("the webhook is gone, disabled or no longer deferred");
    const [record] = await store.findRecords(tenantId, webhook.object, [recordUid]);
    if (!record) return skipped("the record was deleted");
    if (dueTimeOf(record, webhook.rule) !== dueAt) return skipped("the due time changed");
    const data = await webhook.read(recordUid);
    if (!data) return skipped("the filter does not hold");
    const body = [{ data: { [webhook.rootKey]: data } }];
    await deliver(
      deliveryOf(tenantId, webhookId, { kind: "deferred", recordUid, dueAt }, dueAt, body, now()),
    );
  }

  /** Handles one event; throws (to be retried) when the store or the queue fails. */
  return (event: WebhookEvent): Promise<void> => (event.kind === "tick" ? tick(event) : fire(event));
}
