// @test-engines sqlite: its fixture (test/support/delivery-log.ts) writes webhooks and deliveries with bun:sqlite; the dispatcher's PostgreSQL port runs in the conformance suite and the flows
/** Stopping a dispatcher never loses a delivery: it finishes, is handed back, or is taken over after a crash. */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { type Subprocess, spawn } from "bun";
import { IN_FLIGHT_ERROR, OUTCOME_UNKNOWN_ERROR } from "../../common/delivery-log/delivery-log.ts";
import { enqueueDeliveries } from "../../common/delivery-queue.ts";
import { eventually } from "../support/eventually.ts";
import { collect } from "../support/processes.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { type Harness, openHarness } from "./harness.ts";

const root = `${import.meta.dir}/../..`;

describe("dispatcher shutdown", () => {
  let h: Harness;
  let receiver: Receiver;
  let child: Subprocess | undefined;
  beforeEach(() => {
    h = openHarness();
    receiver = startReceiver();
  });
  afterEach(async () => {
    if (child && child.exitCode === null) child.kill("SIGKILL");
    child = undefined;
    await h.close();
    await receiver.stop();
  });

  const statusOf = (deliveryId: string) => h.store.delivery(deliveryId)?.status;

  /** Starts `bun dispatcher/main.ts` with the harness's environment and waits until it consumes. */
  async function spawnDispatcher(overrides: Record<string, string> = {}) {
    child = spawn([process.execPath, "dispatcher/main.ts"], {
      cwd: root,
      env: { ...process.env, ...h.env(overrides) },
      stdout: "pipe",
      stderr: "pipe",
    });
    const out = collect(child.stdout as ReadableStream<Uint8Array>);
    const err = collect(child.stderr as ReadableStream<Uint8Array>);
    await eventually(() => out.text().includes("Dispatcher consuming deliveries"), {
      timeoutMs: 10_000,
    }).catch(() => {
      throw new Error(`dispatcher did not start:\n${err.text()}`);
    });
    return child;
  }

  test("an in-flight delivery finishes within the grace period", async () => {
    receiver.respondWith(async () => {
      await Bun.sleep(300);
      return new Response("ok");
    });
    h.store.addWebhook({ id: "w1", url: receiver.url });
    const dispatcher = await h.start();
    const job = h.store.addDelivery("w1");
    await enqueueDeliveries(h.queue, [job]);
    await eventually(() => expect(receiver.requests).toHaveLength(1));

    await dispatcher.close(5000);
    expect(statusOf(job.deliveryId)).toBe("succeeded");
    expect(h.store.attempts(job.deliveryId).map((a) => a.status_code)).toEqual([200]);
  });

  test("past the grace period it is handed back, and the next dispatcher delivers it", async () => {
    receiver.respondWith(async (_, i) => {
      if (i === 0) await Bun.sleep(5000);
      return new Response("ok");
    });
    h.store.addWebhook({ id: "w1", url: receiver.url });
    const first = await h.start();
    const job = h.store.addDelivery("w1");
    await enqueueDeliveries(h.queue, [job]);
    await eventually(() => expect(receiver.requests).toHaveLength(1));

    const stopping = Date.now();
    await first.close(200);
    expect(Date.now() - stopping).toBeLessThan(2000);
    expect(statusOf(job.deliveryId)).toBe("pending");
    expect(h.store.attempts(job.deliveryId)[0]?.error).toStartWith("interrupted");

    await h.start();
    await eventually(() => expect(statusOf(job.deliveryId)).toBe("succeeded"));
    expect(receiver.requests.map((r) => r.headers["service-request-id"])).toEqual([
      job.deliveryId,
      job.deliveryId,
    ]);
  });

  test("the dispatcher process exits on SIGTERM after its in-flight delivery completes", async () => {
    receiver.respondWith(async () => {
      await Bun.sleep(500);
      return new Response("ok");
    });
    h.store.addWebhook({ id: "w1", url: receiver.url });
    const dispatcherProcess = await spawnDispatcher();
    const job = h.store.addDelivery("w1");
    await enqueueDeliveries(h.queue, [job]);
    await eventually(() => expect(receiver.requests).toHaveLength(1));

    dispatcherProcess.kill("SIGTERM");
    expect(await dispatcherProcess.exited).toBe(0);
    expect(statusOf(job.deliveryId)).toBe("succeeded");
  });

  test("a dispatcher killed mid-delivery loses nothing: another takes the job over when its lock expires", async () => {
    receiver.respondWith(async (_, i) => {
      if (i === 0) await Bun.sleep(10_000);
      return new Response("ok");
    });
    h.store.addWebhook({ id: "w1", url: receiver.url });
    const dispatcherProcess = await spawnDispatcher({ DISPATCH_LOCK_MS: "1000" });
    const job = h.store.addDelivery("w1");
    await enqueueDeliveries(h.queue, [job]);
    await eventually(() => expect(receiver.requests).toHaveLength(1));
    // The receiver holds the request: the log already has the attempt, in flight, the delivery `delivering`.
    expect(statusOf(job.deliveryId)).toBe("delivering");
    expect(h.store.attempts(job.deliveryId).map((a) => [a.attempt, a.status_code, a.error])).toEqual([
      [1, null, IN_FLIGHT_ERROR],
    ]);

    dispatcherProcess.kill("SIGKILL");
    await dispatcherProcess.exited;
    expect(statusOf(job.deliveryId)).toBe("delivering");
    await h.start({ DISPATCH_LOCK_MS: "1000" });
    await eventually(() => expect(statusOf(job.deliveryId)).toBe("succeeded"), { timeoutMs: 10_000 });
    // Every request that reached the receiver is an attempt in the log: the killed one's outcome unknown.
    expect(receiver.requests).toHaveLength(2);
    expect(h.store.delivery(job.deliveryId)?.attempts).toBe(2);
    expect(h.store.attempts(job.deliveryId).map((a) => [a.attempt, a.status_code, a.error])).toEqual([
      [1, null, OUTCOME_UNKNOWN_ERROR],
      [2, 200, null],
    ]);
    const [killed, taken] = h.store.attempts(job.deliveryId);
    const [first, second] = receiver.requests;
    // Each logged before its request left: within the time it took to reach the receiver.
    expect(killed?.started_at).toBeLessThanOrEqual(first?.receivedAt ?? 0);
    expect(taken?.started_at).toBeLessThanOrEqual(second?.receivedAt ?? 0);
    expect(taken?.started_at).toBeGreaterThan(first?.receivedAt ?? Number.POSITIVE_INFINITY);
  });
});
