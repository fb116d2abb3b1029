// @test-engines sqlite: its fixture (test/support/delivery-log.ts) writes webhooks and deliveries with bun:sqlite; the dispatcher's PostgreSQL port runs in the conformance suite and the flows
/**
 * Real deliveries checked by the `standardwebhooks` npm package (the Standard
 * Webhooks reference library for JavaScript): a verifier no one on the team
 * wrote, run on exactly what the receiver got.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { Webhook, WebhookVerificationError } from "standardwebhooks";
import { enqueueDeliveries } from "../../common/delivery-queue.ts";
import { eventually } from "../support/eventually.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { type Harness, openHarness } from "./harness.ts";

describe("signatures checked by the standardwebhooks package", () => {
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

  const succeeded = (deliveryId: string) =>
    eventually(() => h.store.delivery(deliveryId)?.status === "succeeded");

  test("a delivery's body and headers verify, and the verified payload is the job's body", async () => {
    const secret = h.store.addWebhook({ id: "w1", url: `${receiver.url}/hook` });
    await h.start();
    const job = h.store.addDelivery("w1", [{ data: { schemaJobs: { operation: "INSERT", name: "Zoë ✓" } } }]);
    await enqueueDeliveries(h.queue, [job]);
    await succeeded(job.deliveryId);

    const [request] = receiver.requests;
    if (!request) throw new Error("the receiver got nothing");
    expect(new Webhook(secret).verify(request.body, request.headers)).toEqual(job.body);
  });

  test("every attempt of a retried delivery is signed afresh and verifies", async () => {
    const secret = h.store.addWebhook({ id: "w1", url: `${receiver.url}/hook` });
    receiver.respondWith((_, i) => new Response(null, { status: i < 2 ? 500 : 204 }));
    await h.start();
    const job = h.store.addDelivery("w1");
    await enqueueDeliveries(h.queue, [job]);
    await succeeded(job.deliveryId);

    const webhook = new Webhook(secret);
    expect(receiver.requests).toHaveLength(3);
    for (const request of receiver.requests) {
      expect(request.headers["webhook-id"]).toBe(job.deliveryId);
      expect(webhook.verify(request.body, request.headers)).toEqual(job.body);
    }
  });

  test("the package rejects what the dispatcher did not sign: another secret, a changed body", async () => {
    const secret = h.store.addWebhook({ id: "w1", url: `${receiver.url}/hook` });
    const other = h.store.addWebhook({ id: "w2", url: `${receiver.url}/other` });
    await h.start();
    const job = h.store.addDelivery("w1");
    await enqueueDeliveries(h.queue, [job]);
    await succeeded(job.deliveryId);

    const [request] = receiver.requests;
    if (!request) throw new Error("the receiver got nothing");
    expect(() => new Webhook(other).verify(request.body, request.headers)).toThrow(WebhookVerificationError);
    const changed = request.body.replace("INSERT", "DELETE");
    expect(changed).not.toBe(request.body);
    expect(() => new Webhook(secret).verify(changed, request.headers)).toThrow(WebhookVerificationError);
  });
});
