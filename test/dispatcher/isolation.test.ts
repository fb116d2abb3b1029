// @test-engines sqlite: its fixture (test/support/delivery-log.ts) writes webhooks and deliveries with bun:sqlite; the dispatcher's PostgreSQL port runs in the conformance suite and the flows
/** A slow endpoint holds only its own slots: per-endpoint limits in Redis, across dispatchers. */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import type { DeliveryJob } from "../../common/delivery-job.ts";
import { enqueueDeliveries } from "../../common/delivery-queue.ts";
import { eventually } from "../support/eventually.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { type Harness, openHarness } from "./harness.ts";

/** A receiver that answers after `delayMs` and records how many requests it held at once. */
function startCountingReceiver(delayMs: number): Receiver & { maxInFlight: () => number } {
  let inFlight = 0;
  let max = 0;
  const receiver = startReceiver(async () => {
    max = Math.max(max, ++inFlight);
    await Bun.sleep(delayMs);
    inFlight--;
    return new Response("ok");
  });
  return Object.assign(receiver, { maxInFlight: () => max });
}

describe("endpoint isolation", () => {
  let h: Harness;
  const receivers: Receiver[] = [];
  beforeEach(() => {
    h = openHarness();
  });
  afterEach(async () => {
    await h.close();
    await Promise.all(receivers.splice(0).map((r) => r.stop()));
  });

  test("deliveries to a fast endpoint flow past a backlog for a slow one", async () => {
    const slow = startCountingReceiver(2000);
    const fast = startReceiver();
    receivers.push(slow, fast);
    h.store.addWebhook({ id: "slow", url: slow.url });
    h.store.addWebhook({ id: "fast", url: fast.url });
    // Fewer worker slots than slow jobs: slow jobs beyond the endpoint limit must wait outside the slots.
    await h.start({ DISPATCH_CONCURRENCY: "4", DELIVERY_ENDPOINT_CONCURRENCY: "2" });
    const slowJobs = Array.from({ length: 10 }, () => h.store.addDelivery("slow"));
    await enqueueDeliveries(h.queue, slowJobs);
    await eventually(() => expect(slow.requests.length).toBe(2));

    const started = Date.now();
    const fastJobs = Array.from({ length: 5 }, () => h.store.addDelivery("fast"));
    await enqueueDeliveries(h.queue, fastJobs);
    await eventually(() =>
      expect(fastJobs.map((j) => h.store.delivery(j.deliveryId)?.status)).toEqual(Array(5).fill("succeeded")),
    );
    expect(Date.now() - started).toBeLessThan(1000);
    expect(slow.maxInFlight()).toBe(2);
    expect(slowJobs.filter((j) => h.store.delivery(j.deliveryId)?.status === "succeeded")).toHaveLength(0);
  });

  test("attempts hanging at slow endpoints leave the dispatcher's slots to the others", async () => {
    const hanging = [startCountingReceiver(4000), startCountingReceiver(4000)];
    const fast = startCountingReceiver(100);
    const later = startCountingReceiver(100);
    receivers.push(...hanging, fast, later);
    h.store.addWebhook({ id: "hanging-1", url: hanging[0]?.url as string });
    h.store.addWebhook({ id: "hanging-2", url: hanging[1]?.url as string });
    h.store.addWebhook({ id: "fast", url: fast.url });
    h.store.addWebhook({ id: "later", url: later.url });
    // An endpoint limit above the dispatcher's concurrency: only DISPATCH_CONCURRENCY bounds the fast ones.
    await h.start({ DISPATCH_CONCURRENCY: "2", DELIVERY_ENDPOINT_CONCURRENCY: "6" });
    const hangingJobs = ["hanging-1", "hanging-1", "hanging-2", "hanging-2"].map((id) =>
      h.store.addDelivery(id),
    );
    await enqueueDeliveries(h.queue, hangingJobs);
    // Twice the dispatcher's concurrency hanging at once: each slow attempt's slot was taken over.
    await eventually(() => expect(hanging.map((r) => r.requests.length)).toEqual([2, 2]), {
      timeoutMs: 3000,
    });

    const succeeded = (jobs: DeliveryJob[]) => jobs.map((j) => h.store.delivery(j.deliveryId)?.status);
    const fastJobs = Array.from({ length: 6 }, () => h.store.addDelivery("fast"));
    await enqueueDeliveries(h.queue, fastJobs);
    await eventually(() => expect(succeeded(fastJobs)).toEqual(Array(6).fill("succeeded")));
    expect(succeeded(hangingJobs)).not.toContain("succeeded");
    // Taken over, not added to: the attempts at work stayed within DISPATCH_CONCURRENCY.
    expect(fast.maxInFlight()).toBe(2);

    // Once the hanging attempts have answered, the spares stop: still two at work at most.
    await eventually(() => expect(succeeded(hangingJobs)).toEqual(Array(4).fill("succeeded")), {
      timeoutMs: 8000,
    });
    const laterJobs = Array.from({ length: 8 }, () => h.store.addDelivery("later"));
    await enqueueDeliveries(h.queue, laterJobs);
    await eventually(() => expect(succeeded(laterJobs)).toEqual(Array(8).fill("succeeded")));
    expect(later.maxInFlight()).toBe(2);
  }, 20_000);

  test("past DISPATCH_SLOW_CONCURRENCY spares, hanging attempts keep their slots", async () => {
    const hanging = [startCountingReceiver(1500), startCountingReceiver(1500)];
    receivers.push(...hanging);
    h.store.addWebhook({ id: "hanging-1", url: hanging[0]?.url as string });
    h.store.addWebhook({ id: "hanging-2", url: hanging[1]?.url as string });
    await h.start({
      DISPATCH_CONCURRENCY: "2",
      DELIVERY_ENDPOINT_CONCURRENCY: "2",
      DISPATCH_SLOW_CONCURRENCY: "1",
    });
    const jobs = ["hanging-1", "hanging-1", "hanging-2", "hanging-2"].map((id) => h.store.addDelivery(id));
    await enqueueDeliveries(h.queue, jobs);
    await eventually(() =>
      expect(jobs.map((j) => h.store.delivery(j.deliveryId)?.status)).toEqual(Array(4).fill("succeeded")),
    );
    // Three at once (two slots and one spare); the fourth only once one of the first had answered.
    const sentAt = hanging
      .flatMap((r) => r.requests.map((request) => request.receivedAt))
      .sort((a, b) => a - b);
    expect((sentAt[2] as number) - (sentAt[0] as number)).toBeLessThan(1400);
    expect((sentAt[3] as number) - (sentAt[0] as number)).toBeGreaterThanOrEqual(1400);
  });

  test("the per-endpoint limit holds across two dispatchers sharing Redis", async () => {
    const receiver = startCountingReceiver(150);
    receivers.push(receiver);
    h.store.addWebhook({ id: "w1", url: receiver.url });
    await h.start({ DISPATCH_CONCURRENCY: "4", DELIVERY_ENDPOINT_CONCURRENCY: "2" });
    await h.start({ DISPATCH_CONCURRENCY: "4", DELIVERY_ENDPOINT_CONCURRENCY: "2" });
    const jobs = Array.from({ length: 8 }, () => h.store.addDelivery("w1"));
    await enqueueDeliveries(h.queue, jobs);

    await eventually(
      () =>
        expect(jobs.map((j) => h.store.delivery(j.deliveryId)?.status)).toEqual(Array(8).fill("succeeded")),
      { timeoutMs: 10_000 },
    );
    expect(receiver.maxInFlight()).toBe(2);
    // Waiting for a slot spends no attempt.
    expect(jobs.map((j) => h.store.delivery(j.deliveryId)?.attempts)).toEqual(Array(8).fill(1));
  });
});
