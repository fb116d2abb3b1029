// @test-engines sqlite: its fixture (test/support/delivery-log.ts) writes webhooks and deliveries with bun:sqlite; the check itself is the port's, run on both engines by the conformance suite
/**
 * The deliverer builds an attempt's request from the webhook definition it
 * read last, and the store checks, as it logs the attempt as started, that the
 * webhook has not changed since: a real deliverer (real store file, Redis
 * limiter, HTTP sender, secret box) against a real receiver. The store is
 * wrapped to count its reads and to land an edit just before an attempt is
 * logged (instrumentation: every call still reaches the real store).
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import type { DeliveryJob } from "../../common/delivery-job.ts";
import type { DeliveryStore } from "../../common/delivery-log/delivery-store.ts";
import { openDeliveryStore } from "../../common/delivery-log/open-delivery-store.ts";
import { createLogger } from "../../common/log.ts";
import { createSecretBox } from "../../common/secret-box.ts";
import { RETRY_JITTER } from "../../dispatcher/decide-outcome.ts";
import { createDeliverer, type Deliver } from "../../dispatcher/deliver.ts";
import { createEndpointLimiter, type EndpointLimiter } from "../../dispatcher/endpoint-limiter.ts";
import { createHttpSender } from "../../dispatcher/http-sender.ts";
import { parseAllowedRanges } from "../../dispatcher/ssrf/destination-policy.ts";
import { type DeliveryLogFixture, openDeliveryLog, TEST_SECRETS_KEY } from "../support/delivery-log.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { openTestRedis, type TestRedis } from "../support/redis.ts";

describe("webhook definitions kept between attempts", () => {
  let fixture: DeliveryLogFixture;
  let receiver: Receiver;
  let redis: TestRedis;
  let store: DeliveryStore;
  let limiter: EndpointLimiter;
  let deliver: Deliver;
  let loads = 0;
  /** Runs once, just before the next attempt is logged as started. */
  let beforeStart: (() => void) | null = null;

  beforeEach(async () => {
    fixture = openDeliveryLog();
    receiver = startReceiver();
    redis = openTestRedis();
    const real = await openDeliveryStore({ engine: "sqlite", path: `${fixture.dataDir}/store.sqlite` });
    loads = 0;
    beforeStart = null;
    store = {
      ...real,
      loadDelivery: (...args) => {
        loads++;
        return real.loadDelivery(...args);
      },
      startAttempt: (...args) => {
        const edit = beforeStart;
        beforeStart = null;
        edit?.();
        return real.startAttempt(...args);
      },
    };
    limiter = createEndpointLimiter({
      redis: redis.redis,
      keyPrefix: `${redis.prefix}:endpoints`,
      limit: 8,
      leaseMs: 5000,
    });
    deliver = createDeliverer({
      store,
      box: createSecretBox(TEST_SECRETS_KEY),
      limiter,
      send: createHttpSender({
        policy: { allowHttp: true, allowedRanges: parseAllowedRanges("127.0.0.0/8") },
        timeoutMs: 5000,
      }),
      log: createLogger("silent"),
      retry: { schedule: [100], jitter: RETRY_JITTER },
      maxRetryAfterMs: 1000,
      busy: { busyDelayMs: 50, maxMs: 1000, limit: 8 },
    });
  });
  afterEach(async () => {
    await limiter.close();
    await store.close();
    await receiver.stop();
    await redis.close();
    fixture.close();
  });

  const attempt = (job: DeliveryJob) => deliver(job, { attempt: 1 });

  test("20 deliveries to one webhook read its definition once (one read per attempt before), each logged and POSTed", async () => {
    fixture.addWebhook({ id: "w1", url: `${receiver.url}/hook` });
    const jobs = Array.from({ length: 20 }, () => fixture.addDelivery("w1"));
    for (const job of jobs) expect(await attempt(job)).toEqual({ kind: "succeeded" });
    expect(loads).toBe(1);
    expect(receiver.requests).toHaveLength(20);
    for (const job of jobs)
      expect(fixture.delivery(job.deliveryId)).toEqual({ status: "succeeded", attempts: 1 });
  });

  test("an edit landing after an attempt was built and before it is logged: nothing of the old request leaves; the attempt is rebuilt from the new definition", async () => {
    fixture.addWebhook({ id: "w1", url: `${receiver.url}/old`, headers: { "X-Team": "old" } });
    expect(await attempt(fixture.addDelivery("w1"))).toEqual({ kind: "succeeded" });
    beforeStart = () =>
      fixture.editWebhook("w1", { url: `${receiver.url}/new`, headers: { "X-Team": "new" } });
    const job = fixture.addDelivery("w1");
    expect(await attempt(job)).toEqual({ kind: "succeeded" });
    expect(receiver.requests.map((r) => [r.path, r.headers["x-team"]])).toEqual([
      ["/old", "old"],
      ["/new", "new"],
    ]);
    expect(fixture.delivery(job.deliveryId)).toEqual({ status: "succeeded", attempts: 1 });
    expect(loads).toBe(2);
  });

  test("a webhook disabled since it was read fails its next delivery without a POST", async () => {
    fixture.addWebhook({ id: "w1", url: `${receiver.url}/hook` });
    expect(await attempt(fixture.addDelivery("w1"))).toEqual({ kind: "succeeded" });
    fixture.editWebhook("w1", { enabled: false });
    const job = fixture.addDelivery("w1");
    expect(await attempt(job)).toMatchObject({ kind: "failed", reason: "the webhook is disabled" });
    expect(receiver.requests).toHaveLength(1);
    expect(fixture.delivery(job.deliveryId)).toEqual({ status: "failed", attempts: 1 });
  });

  test("a finished delivery's duplicate job is dropped without a POST, with the definition kept", async () => {
    fixture.addWebhook({ id: "w1", url: `${receiver.url}/hook` });
    const job = fixture.addDelivery("w1");
    expect(await attempt(job)).toEqual({ kind: "succeeded" });
    expect(await attempt(job)).toEqual({ kind: "skipped" });
    expect(receiver.requests).toHaveLength(1);
    expect(fixture.attempts(job.deliveryId)).toHaveLength(1);
  });
});
