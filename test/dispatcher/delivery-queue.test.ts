// @test-engines sqlite: its fixture (test/support/delivery-log.ts) writes webhooks and deliveries with bun:sqlite; the dispatcher's PostgreSQL port runs in the conformance suite and the flows
/** The queue contract the API enqueues through: validation, idempotence, requeue. */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { type DeliveryJob, deliveryJobId } from "../../common/delivery-job.ts";
import { enqueueDeliveries, InvalidDeliveryJobError, requeueDelivery } from "../../common/delivery-queue.ts";
import { eventually } from "../support/eventually.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { type Harness, openHarness } from "./harness.ts";

describe("delivery queue", () => {
  let h: Harness;
  let receiver: Receiver;
  beforeEach(() => {
    h = openHarness();
    receiver = startReceiver();
  });
  afterEach(async () => {
    await h.close();
    await receiver.stop();
  });

  const statusOf = (job: DeliveryJob) => h.store.delivery(job.deliveryId)?.status;

  test("a job that breaks the contract is refused before it reaches Redis, with the rest of its batch", async () => {
    h.store.addWebhook({ id: "w1", url: receiver.url });
    const good = h.store.addDelivery("w1");
    const bad = { ...good, eventId: "m2", body: [] } as DeliveryJob;
    const refused = enqueueDeliveries(h.queue, [good, bad]);
    await expect(refused).rejects.toThrow(InvalidDeliveryJobError);
    await expect(refused).rejects.toThrow("jobs[1].body");
    expect(await h.queue.count()).toBe(0);
  });

  test("enqueueing the same webhook × mutation again is a no-op, in a few jobs (a command each) or many (one MULTI)", async () => {
    h.store.addWebhook({ id: "w1", url: receiver.url });
    const job = h.store.addDelivery("w1");
    await enqueueDeliveries(h.queue, [job]);
    await enqueueDeliveries(h.queue, [job, job]);
    expect(await h.queue.count()).toBe(1);
    const many = Array.from({ length: 6 }, (_, i) => h.store.addDelivery("w1", [{}], `m-many-${i}`));
    await enqueueDeliveries(h.queue, many);
    await enqueueDeliveries(h.queue, [job, ...many]);
    const ids = (await h.queue.getJobs(["waiting"])).map((queued) => queued.id).sort();
    expect(ids).toEqual([job, ...many].map((j) => deliveryJobId(j.webhookId, j.eventId)).sort());
  });

  test("every kind of event (a mutation, a deferred firing, a tick) is one delivery: enqueued once, POSTed once, its event in service-request-id's delivery", async () => {
    h.store.addWebhook({ id: "w1", url: receiver.url });
    const events = [
      `m-${crypto.randomUUID()}`,
      `deferred:${crypto.randomUUID()}:1700000000000`,
      "tick:1700000060000",
    ];
    const jobs = events.map((eventId) => h.store.addDelivery("w1", [{}], eventId));
    await enqueueDeliveries(h.queue, jobs);
    await enqueueDeliveries(h.queue, [...jobs, ...jobs]);
    expect(await h.queue.count()).toBe(3);
    expect(jobs.map((job) => deliveryJobId(job.webhookId, job.eventId))).toEqual([
      `w1.${events[0]}`,
      `w1.deferred~${events[1]?.split(":")[1]}~1700000000000`,
      "w1.tick~1700000060000",
    ]);
    await h.start();
    await eventually(() => expect(jobs.map(statusOf)).toEqual(["succeeded", "succeeded", "succeeded"]));
    expect(receiver.requests.map((r) => r.headers["service-request-id"]).sort()).toEqual(
      jobs.map((job) => job.deliveryId).sort(),
    );
  });

  test("a job queued before event ids (its mutation in `mutationId`) is still delivered", async () => {
    h.store.addWebhook({ id: "w1", url: receiver.url });
    const job = h.store.addDelivery("w1");
    const { eventId, ...rest } = job;
    await h.queue.add("deliver", { ...rest, mutationId: eventId } as unknown as DeliveryJob, {
      jobId: deliveryJobId(job.webhookId, eventId),
    });
    await h.start();
    await eventually(() => expect(statusOf(job)).toBe("succeeded"));
    expect(receiver.requests).toHaveLength(1);
  });

  test("after delivery, a job enqueued again (a feed re-reading after a crash, a stray requeue) is dropped without a POST", async () => {
    h.store.addWebhook({ id: "w1", url: receiver.url });
    await h.start();
    const job = h.store.addDelivery("w1");
    const dropped = () => h.logLines.filter((line) => line.msg === "finished delivery's job dropped");
    const gone = async () =>
      expect(await h.queue.getJob(deliveryJobId(job.webhookId, job.eventId))).toBeUndefined();
    await enqueueDeliveries(h.queue, [job]);
    await eventually(() => expect(statusOf(job)).toBe("succeeded"));
    // A completed job leaves the queue: the delivery log is what makes the next one harmless.
    await eventually(gone);
    await enqueueDeliveries(h.queue, [job]);
    await eventually(() => expect(dropped()).toHaveLength(1));
    await eventually(gone);
    // Not reset to pending first: the log says it is finished, so the job is a duplicate.
    expect(await requeueDelivery(h.queue, job)).toBe("queued");
    await eventually(() => expect(dropped()).toHaveLength(2));
    expect(receiver.requests).toHaveLength(1);
  });

  test("requeue after a final failure delivers again with a fresh retry budget", async () => {
    h.store.addWebhook({ id: "w1", url: receiver.url });
    receiver.respondWith((_, i) => new Response(null, { status: i < 4 ? 500 : 200 }));
    await h.start({ DELIVERY_RETRY_SCHEDULE: "20ms,20ms,20ms" });
    const job = h.store.addDelivery("w1");
    await enqueueDeliveries(h.queue, [job]);
    await eventually(() => expect(statusOf(job)).toBe("failed"));

    h.store.resetDelivery(job.deliveryId);
    expect(await requeueDelivery(h.queue, job)).toBe("queued");
    await eventually(() => expect(statusOf(job)).toBe("succeeded"));
    expect(h.store.attempts(job.deliveryId).map((a) => [a.attempt, a.status_code])).toEqual([
      [1, 500],
      [2, 500],
      [3, 500],
      [4, 500],
      [5, 200],
    ]);
  });

  test("requeue of a delivery waiting for its retry runs it at once", async () => {
    h.store.addWebhook({ id: "w1", url: receiver.url });
    receiver.respondWith((_, i) => new Response(null, { status: i === 0 ? 500 : 200 }));
    await h.start({ DELIVERY_RETRY_SCHEDULE: "1h" });
    const job = h.store.addDelivery("w1");
    await enqueueDeliveries(h.queue, [job]);
    await eventually(async () => expect(await h.queue.getDelayedCount()).toBe(1));

    expect(await requeueDelivery(h.queue, job)).toBe("promoted");
    await eventually(() => expect(statusOf(job)).toBe("succeeded"));
  });

  test("requeue of a delivery still waiting to be sent changes nothing", async () => {
    h.store.addWebhook({ id: "w1", url: receiver.url });
    const job = h.store.addDelivery("w1");
    await enqueueDeliveries(h.queue, [job]);
    expect(await requeueDelivery(h.queue, job)).toBe("already-queued");
    expect(await h.queue.count()).toBe(1);
  });
});
