/**
 * The change feed's webhook consumer: a batch of committed mutations → the
 * tenants' delivery jobs (matcher), a job whose body would pass the size limit
 * split into several deliveries, logged as pending deliveries, then enqueued.
 * A batch handed again (after a crash, a failure or a lease hand-over) plans
 * the same deliveries: the insert keeps the rows already there, a job still
 * queued is not added twice (same job id), a finished delivery's job is
 * dropped unsent.
 */
import { type DeliveryJob, deliveryIdOf } from "../../common/delivery-job.ts";
import type { Logger } from "../../common/log.ts";
import type { CatalogueSource } from "../model/catalogue.ts";
import type { LoggedChange } from "../model/record-values.ts";
import type { DeliveryRecord, Store } from "../store/store.ts";
import { matchChanges, type SubscriberMatch } from "../subscriptions/match-changes.ts";
import type { Subscription } from "../subscriptions/subscription.ts";
import type { FeedConsumer } from "./feed-consumer.ts";
import { prefetchLookups } from "./prefetch-lookups.ts";
import { type PlannedDelivery, splitDelivery } from "./split-delivery.ts";

export interface CompiledWebhook {
  webhookId: string;
  subscription: Subscription;
}

/** A tenant's enabled webhooks, compiled (api/webhooks/webhook-compiler.ts keeps them per version). */
export interface CompiledWebhookSource {
  forTenant(tenantId: string): Promise<CompiledWebhook[]>;
}

export interface WebhookConsumerDeps {
  store: Store;
  catalogues: CatalogueSource;
  compiler: CompiledWebhookSource;
  /** Puts jobs on the delivery queue (idempotent per job id). */
  enqueue: (jobs: DeliveryJob[]) => Promise<void>;
  log: Logger;
  /** Largest delivery body in bytes (DELIVERY_MAX_BODY_BYTES); larger ones are split. Default 1 MiB. */
  maxBodyBytes?: number;
}

/** Delivery jobs of one mutation's changes (all of one tenant). */
type Matcher = (mutation: readonly LoggedChange[]) => DeliveryJob[];

/** One delivery job per matched webhook, its body the elements, its id from webhook × mutation. */
function jobsOf(
  mutation: readonly LoggedChange[],
  matches: SubscriberMatch<CompiledWebhook>[],
): DeliveryJob[] {
  const { tenantId, mutationId, committedAt, requestId } = mutation[0] as LoggedChange;
  return matches.map(({ subscriber: { webhookId }, elements }) => ({
    tenantId,
    webhookId,
    eventId: mutationId,
    deliveryId: deliveryIdOf(webhookId, mutationId, committedAt),
    body: elements,
    committedAt,
    // The request's id goes with the job, so the dispatcher's lines about the delivery carry it.
    ...(requestId ? { requestId } : {}),
  }));
}

/** The pending delivery log row of a planned delivery. */
const pendingDelivery = ({ job, bodyText }: PlannedDelivery, at: number): DeliveryRecord => ({
  tenantId: job.tenantId,
  id: job.deliveryId,
  webhookId: job.webhookId,
  eventId: job.eventId,
  part: job.part ?? 0,
  status: "pending",
  body: bodyText,
  test: false,
  attempts: 0,
  committedAt: job.committedAt,
  createdAt: at,
  updatedAt: at,
});

export function createWebhookConsumer(deps: WebhookConsumerDeps): FeedConsumer {
  const { store, catalogues, compiler, enqueue, log, maxBodyBytes = 1024 * 1024 } = deps;

  /**
   * The matcher of one tenant for one batch: its webhooks, catalogue and the
   * records its filters follow are read once, for all of its changes in the batch.
   */
  async function matcherFor(tenantId: string, changes: readonly LoggedChange[]): Promise<Matcher> {
    const webhooks = await compiler.forTenant(tenantId);
    if (webhooks.length === 0) return () => [];
    const filters = webhooks.flatMap(({ subscription: s }) =>
      [s.filter, s.extendedFilter].filter((f) => f !== null),
    );
    const lookup = await prefetchLookups(store, tenantId, changes, filters);
    const catalogue = await catalogues.get(tenantId);
    const tracked = new Set(
      catalogue.objects.filter((object) => object.tracked).map((object) => object.name),
    );
    const context = {
      now: Date.now(),
      lookup,
      select: () => [],
      isTracked: (objectName: string) => tracked.has(objectName),
    };
    return (mutation) => jobsOf(mutation, matchChanges(mutation, webhooks, context));
  }

  async function deliveriesOf(
    entries: readonly LoggedChange[],
    mutations: readonly (readonly LoggedChange[])[],
  ): Promise<PlannedDelivery[]> {
    const matchers = new Map<string, Matcher>();
    for (const [tenantId, changes] of Map.groupBy(entries, (entry) => entry.tenantId))
      matchers.set(tenantId, await matcherFor(tenantId, changes));
    const jobs = mutations.flatMap((mutation) =>
      (matchers.get((mutation[0] as LoggedChange).tenantId) as Matcher)(mutation),
    );
    const planned = jobs.flatMap((job) => splitDelivery(job, maxBodyBytes));
    for (const { job, bytes } of planned) {
      // Delivered all the same (at least once): the selection bound keeps one element's size to
      // the record's own values, so this is a record too large for the limit, not an amplification.
      if (bytes > maxBodyBytes)
        log.warn("one change's element is larger than the delivery body limit; delivered alone", {
          tenantId: job.tenantId,
          webhookId: job.webhookId,
          deliveryId: job.deliveryId,
          requestId: job.requestId,
          bytes,
          maxBodyBytes,
        });
    }
    return planned;
  }

  return {
    name: "webhooks",
    async consume(batch) {
      const deliveries = await deliveriesOf(batch.entries, batch.mutations);
      if (deliveries.length === 0) return;
      const at = Date.now();
      await store.unitOfWork(async (tx) => {
        await batch.savePositionIn(tx);
        await tx.insertDeliveries(deliveries.map((delivery) => pendingDelivery(delivery, at)));
      });
      // The rows before the jobs: the dispatcher logs each attempt against its delivery's row.
      await enqueue(deliveries.map((delivery) => delivery.job));
    },
  };
}
