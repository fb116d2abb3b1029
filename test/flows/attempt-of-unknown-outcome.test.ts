/**
 * The real processes: a dispatcher SIGKILLed while the receiver holds its
 * POST, another taking the job over. Every request the receiver got is an
 * attempt in the delivery log, and `GET /webhooks/{id}/deliveries` shows the
 * killed one in flight, then of unknown outcome.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { IN_FLIGHT_ERROR, OUTCOME_UNKNOWN_ERROR } from "../../common/delivery-log/delivery-log.ts";
import { eventually } from "../support/eventually.ts";
import { apiClient } from "../support/flow/api-client.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { type RunningService, startService } from "../support/service-processes.ts";

let service: RunningService;
let receiver: Receiver;

beforeAll(async () => {
  // The first request is held until the test ends; the second is answered at once.
  receiver = startReceiver(async (_, i) => {
    if (i === 0) await Bun.sleep(30_000);
    return new Response("ok");
  });
  service = await startService({ dispatcherEnv: { DISPATCH_LOCK_MS: "1000" } });
});
afterAll(async () => {
  await service.stop();
  await receiver.stop();
});

type Attempt = {
  attempt: number;
  at: string;
  statusCode: number | null;
  durationMs: number;
  responseBody: string | null;
  error: string | null;
};

test("a request sent by a dispatcher killed before its answer is an attempt of unknown outcome", async () => {
  const client = apiClient(service.base, service.token);
  const created = await client.request("POST", "/webhooks", {
    body: {
      name: "regions",
      url: `${receiver.url}/hook`,
      type: "graphql",
      query: "subscription { schemaRegions { operation data { Name } } }",
    },
  });
  expect(created.status).toBe(201);
  const webhookId: string = created.body.result.id;
  const inserted = await client.graphql(
    `mutation { schema { insertRegions(input: {Name: "North", Timezone: "UTC"}) } }`,
  );
  expect(inserted.errors).toBeUndefined();
  const delivery = async () =>
    (await client.request("GET", `/webhooks/${webhookId}/deliveries`)).body.result[0] as {
      id: string;
      status: string;
      attemptCount: number;
      attempts: Attempt[];
    };

  await eventually(() => expect(receiver.requests).toHaveLength(1), { timeoutMs: 10_000 });
  // The receiver holds the request: the log shows it in flight.
  expect(await delivery()).toMatchObject({
    status: "delivering",
    attemptCount: 1,
    attempts: [{ attempt: 1, statusCode: null, responseBody: null, error: IN_FLIGHT_ERROR }],
  });

  await service.dispatcher.kill();
  await service.dispatcher.start();
  await eventually(async () => expect((await delivery()).status).toBe("succeeded"), { timeoutMs: 15_000 });

  const logged = await delivery();
  expect(receiver.requests.map((r) => r.headers["service-request-id"])).toEqual([logged.id, logged.id]);
  expect(logged.attemptCount).toBe(2);
  expect(logged.attempts).toEqual([
    {
      attempt: 1,
      at: expect.any(String),
      durationMs: 0,
      statusCode: null,
      responseBody: null,
      error: OUTCOME_UNKNOWN_ERROR,
    },
    {
      attempt: 2,
      at: expect.any(String),
      durationMs: expect.any(Number),
      statusCode: 200,
      responseBody: "ok",
      error: null,
    },
  ]);
}, 60_000);
