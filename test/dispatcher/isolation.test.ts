/** A slow endpoint holds only its own slots: per-endpoint limits in Redis, across dispatchers. */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
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
