// @test-engines sqlite: its fixture (test/support/delivery-log.ts) writes webhooks and deliveries with bun:sqlite; the dispatcher's PostgreSQL port runs in the conformance suite and the flows
/** Deliveries end to end: real queue, real dispatcher, real store file, real HTTP receivers. */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { enqueueDeliveries } from "../../common/delivery-queue.ts";
import { USER_AGENT } from "../../dispatcher/build-request.ts";
import { eventually } from "../support/eventually.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { standardWebhooksProblem } from "../support/standard-webhooks.ts";
import { type Harness, openHarness } from "./harness.ts";

describe("delivery", () => {
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

  const finished = (deliveryId: string) =>
    eventually(() => {
      const status = h.store.delivery(deliveryId)?.status;
      return status === "succeeded" || status === "failed" ? (status as string) : false;
    });

  test("POSTs the signed body with every header; an independent Standard Webhooks check accepts it", async () => {
    h.store.setVariable("HOOK_PATH", "incoming");
    h.store.setVariable("API_TOKEN", "tok-123", "secret");
    const secret = h.store.addWebhook({
      id: "w1",
      url: `${receiver.url}/{{ HOOK_PATH }}`,
      headers: { Authorization: "Bearer {{ API_TOKEN }}", "X-Tenant": "acme" },
    });
    receiver.respondWith(async (request) => {
      const problem = await standardWebhooksProblem(secret, request);
      return problem ? new Response(problem, { status: 401 }) : new Response("thanks");
    });
    await h.start();
    const job = h.store.addDelivery("w1");
    await enqueueDeliveries(h.queue, [job]);

    expect(await finished(job.deliveryId)).toBe("succeeded");
    const [request] = receiver.requests;
    expect(receiver.requests).toHaveLength(1);
    expect(request?.method).toBe("POST");
    expect(request?.path).toBe("/incoming");
    expect(JSON.parse(request?.body ?? "")).toEqual(job.body);
    expect(request?.headers).toMatchObject({
      "content-type": "application/json",
      "user-agent": USER_AGENT,
      "service-webhook-id": "w1",
      "service-request-id": job.deliveryId,
      "webhook-id": job.deliveryId,
      authorization: "Bearer tok-123",
      "x-tenant": "acme",
    });
    expect(h.store.delivery(job.deliveryId)).toEqual({ status: "succeeded", attempts: 1 });
    expect(h.store.attempts(job.deliveryId)).toMatchObject([
      { attempt: 1, status_code: 200, response_body: "thanks", error: null },
    ]);
  });

  test("500, 500, 200: delivered on attempt 3, with the same request id each time and every attempt logged", async () => {
    h.store.addWebhook({ id: "w1", url: `${receiver.url}/hook` });
    const answers = [500, 500, 200];
    receiver.respondWith((_, i) => new Response(`answer ${i + 1}`, { status: answers[i] ?? 200 }));
    await h.start();
    const job = h.store.addDelivery("w1");
    await enqueueDeliveries(h.queue, [job]);

    expect(await finished(job.deliveryId)).toBe("succeeded");
    expect(receiver.requests.map((r) => r.headers["service-request-id"])).toEqual(
      Array(3).fill(job.deliveryId),
    );
    expect(h.store.delivery(job.deliveryId)).toEqual({ status: "succeeded", attempts: 3 });
    const attempts = h.store.attempts(job.deliveryId);
    expect(attempts.map((a) => [a.attempt, a.status_code, a.response_body, a.error])).toEqual([
      [1, 500, "answer 1", "HTTP 500"],
      [2, 500, "answer 2", "HTTP 500"],
      [3, 200, "answer 3", null],
    ]);
    // The schedule (100 ms ±20%) separates the attempts.
    const gaps = receiver.requests
      .slice(1)
      .map((r, i) => r.receivedAt - (receiver.requests[i]?.receivedAt ?? 0));
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(75);
  });

  test("gives up when the schedule is spent: 4 attempts with 3 retries configured", async () => {
    h.store.addWebhook({ id: "w1", url: receiver.url });
    receiver.respondWith(() => new Response("down", { status: 503 }));
    await h.start({ DELIVERY_RETRY_SCHEDULE: "50ms,50ms,50ms" });
    const job = h.store.addDelivery("w1");
    await enqueueDeliveries(h.queue, [job]);

    expect(await finished(job.deliveryId)).toBe("failed");
    expect(receiver.requests).toHaveLength(4);
    expect(h.store.attempts(job.deliveryId).at(-1)?.error).toBe("gave up after 4 attempts: HTTP 503");
  });

  test("410 Gone disables the webhook and fails the delivery; later deliveries fail without a POST", async () => {
    h.store.addWebhook({ id: "w1", url: receiver.url });
    receiver.respondWith(() => new Response("gone", { status: 410 }));
    await h.start();
    const first = h.store.addDelivery("w1");
    await enqueueDeliveries(h.queue, [first]);

    expect(await finished(first.deliveryId)).toBe("failed");
    expect(h.store.attempts(first.deliveryId)).toMatchObject([{ attempt: 1, status_code: 410 }]);
    expect(h.store.webhook("w1")).toEqual({
      enabled: 0,
      disabled_reason: "HTTP 410 Gone: the endpoint asked to stop",
    });

    const second = h.store.addDelivery("w1");
    await enqueueDeliveries(h.queue, [second]);
    expect(await finished(second.deliveryId)).toBe("failed");
    expect(receiver.requests).toHaveLength(1);
    expect(h.store.attempts(second.deliveryId)).toMatchObject([
      {
        attempt: 1,
        status_code: null,
        error: "the webhook is disabled: HTTP 410 Gone: the endpoint asked to stop",
      },
    ]);
  });

  test("a config variable deleted after creation fails the delivery with the reason, logged, and no POST", async () => {
    h.store.setVariable("TOKEN", "t");
    h.store.addWebhook({ id: "w1", url: receiver.url, headers: { "X-Token": "{{ TOKEN }}" } });
    h.store.deleteVariable("TOKEN");
    await h.start();
    const job = h.store.addDelivery("w1");
    await enqueueDeliveries(h.queue, [job]);

    expect(await finished(job.deliveryId)).toBe("failed");
    expect(receiver.requests).toEqual([]);
    expect(h.store.attempts(job.deliveryId)).toMatchObject([
      { attempt: 1, status_code: null, error: "undefined config variable: TOKEN" },
    ]);
    expect(h.logLines).toContainEqual(
      expect.objectContaining({
        msg: "delivery failed",
        deliveryId: job.deliveryId,
        reason: "undefined config variable: TOKEN",
      }),
    );
  });

  test("a deleted webhook fails its delivery without a POST", async () => {
    h.store.addWebhook({ id: "w1", url: receiver.url });
    const job = h.store.addDelivery("w1");
    h.store.deleteWebhook("w1");
    await h.start();
    await enqueueDeliveries(h.queue, [job]);

    expect(await finished(job.deliveryId)).toBe("failed");
    expect(receiver.requests).toEqual([]);
    expect(h.store.attempts(job.deliveryId)).toMatchObject([{ error: "the webhook was deleted" }]);
  });

  test("a loopback URL is refused when the operator's allowlist is off", async () => {
    h.store.addWebhook({ id: "w1", url: receiver.url });
    await h.start({ DELIVERY_ALLOW_PRIVATE_NETWORKS: "" });
    const job = h.store.addDelivery("w1");
    await enqueueDeliveries(h.queue, [job]);

    expect(await finished(job.deliveryId)).toBe("failed");
    expect(receiver.requests).toEqual([]);
    expect(h.store.attempts(job.deliveryId)).toMatchObject([
      { attempt: 1, status_code: null, error: "destination refused: 127.0.0.1 is a loopback address" },
    ]);
  });

  test("plain http is refused unless the operator allows it", async () => {
    h.store.addWebhook({ id: "w1", url: receiver.url });
    await h.start({ DELIVERY_ALLOW_HTTP: "false" });
    const job = h.store.addDelivery("w1");
    await enqueueDeliveries(h.queue, [job]);

    expect(await finished(job.deliveryId)).toBe("failed");
    expect(receiver.requests).toEqual([]);
    expect(h.store.attempts(job.deliveryId)[0]?.error).toBe(
      "plain http:// is not allowed (DELIVERY_ALLOW_HTTP is off)",
    );
  });

  test("Retry-After on 429 replaces the scheduled wait", async () => {
    h.store.addWebhook({ id: "w1", url: receiver.url });
    receiver.respondWith((_, i) =>
      i === 0
        ? new Response("slow down", { status: 429, headers: { "Retry-After": "1" } })
        : new Response("ok"),
    );
    await h.start({ DELIVERY_RETRY_SCHEDULE: "1h" });
    const job = h.store.addDelivery("w1");
    await enqueueDeliveries(h.queue, [job]);

    expect(await finished(job.deliveryId)).toBe("succeeded");
    const [first, second] = receiver.requests;
    expect((second?.receivedAt ?? 0) - (first?.receivedAt ?? 0)).toBeGreaterThanOrEqual(950);
    expect(h.store.attempts(job.deliveryId).map((a) => [a.status_code, a.error])).toEqual([
      [429, "HTTP 429 with Retry-After"],
      [200, null],
    ]);
  });

  test("a redirect is not followed and counts as a failure", async () => {
    const elsewhere = startReceiver();
    h.store.addWebhook({ id: "w1", url: receiver.url });
    receiver.respondWith((_, i) =>
      i === 0
        ? new Response(null, { status: 302, headers: { location: elsewhere.url } })
        : new Response("ok"),
    );
    await h.start();
    const job = h.store.addDelivery("w1");
    await enqueueDeliveries(h.queue, [job]);

    expect(await finished(job.deliveryId)).toBe("succeeded");
    expect(elsewhere.requests).toEqual([]);
    expect(h.store.attempts(job.deliveryId)[0]).toMatchObject({
      status_code: 302,
      error: `HTTP 302: redirect not followed (to ${elsewhere.url})`,
    });
    await elsewhere.stop();
  });

  test("a receiver slower than the timeout is retried; the attempt logs the timeout", async () => {
    h.store.addWebhook({ id: "w1", url: receiver.url });
    receiver.respondWith(async (_, i) => {
      if (i === 0) await Bun.sleep(1000);
      return new Response("ok");
    });
    await h.start({ DELIVERY_TIMEOUT_MS: "200" });
    const job = h.store.addDelivery("w1");
    await enqueueDeliveries(h.queue, [job]);

    expect(await finished(job.deliveryId)).toBe("succeeded");
    const [timedOut, delivered] = h.store.attempts(job.deliveryId);
    expect(timedOut).toMatchObject({ status_code: null, error: "no answer within 200 ms" });
    expect(timedOut?.duration_ms).toBeGreaterThanOrEqual(190);
    expect(delivered).toMatchObject({ status_code: 200 });
  });

  test("only the first 1 KB of a response body is kept", async () => {
    h.store.addWebhook({ id: "w1", url: receiver.url });
    receiver.respondWith(() => new Response("x".repeat(5000)));
    await h.start();
    const job = h.store.addDelivery("w1");
    await enqueueDeliveries(h.queue, [job]);

    expect(await finished(job.deliveryId)).toBe("succeeded");
    expect(h.store.attempts(job.deliveryId)[0]?.response_body).toBe("x".repeat(1024));
  });

  test("a secret the dispatcher cannot open is retried as an internal error, then fails with the reason logged", async () => {
    h.store.addWebhook({ id: "w1", url: receiver.url });
    await h.start({
      SECRETS_KEY: "another-key-another-key-another-key-0123",
      DELIVERY_RETRY_SCHEDULE: "20ms,20ms",
    });
    const job = h.store.addDelivery("w1");
    await enqueueDeliveries(h.queue, [job]);

    expect(await finished(job.deliveryId)).toBe("failed");
    expect(receiver.requests).toEqual([]);
    const attempts = h.store.attempts(job.deliveryId);
    expect(attempts).toHaveLength(1);
    expect(attempts[0]?.error).toStartWith("internal error: ");
  });
});
