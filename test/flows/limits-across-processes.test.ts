/**
 * Limits hold across real processes, because they are counted in Redis, not
 * per process: one token's requests sent alternately to two API processes
 * pass the token's burst once between them, not once per process; two
 * dispatchers delivering to one endpoint keep at most its concurrency in
 * flight between them, not that many each.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { eventually } from "../support/eventually.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { type RunningService, startService } from "../support/service-processes.ts";

const services: RunningService[] = [];
const receivers: Receiver[] = [];
afterAll(async () => {
  for (const receiver of receivers) await receiver.stop();
  for (const service of services) await service.stop();
});

describe("limits across processes", () => {
  test("a token's rate limit is counted across two API processes: the burst passes once between them", async () => {
    const BURST = 4;
    // A rate of one request in 100 s: within the test, the bucket only empties.
    const service = await startService({
      apiEnv: { RATE_LIMIT_TOKEN_BURST: String(BURST), RATE_LIMIT_TOKEN_PER_SECOND: "0.01" },
    });
    services.push(service);
    const second = await service.startApi();
    const statuses: Record<string, number[]> = { first: [], second: [] };
    for (let i = 0; i < 12; i++) {
      const [which, base] = i % 2 === 0 ? ["first", service.base] : ["second", second.base];
      const answer = await fetch(`${base}/auth/whoami`, {
        headers: { authorization: `Bearer ${service.token}` },
      });
      await answer.arrayBuffer();
      statuses[which]?.push(answer.status);
    }
    const all = [...(statuses.first ?? []), ...(statuses.second ?? [])];
    // Counted per process, each would have let BURST through: 2 × BURST in all.
    expect(all.filter((status) => status === 200)).toHaveLength(BURST);
    expect(all.filter((status) => status === 429)).toHaveLength(12 - BURST);
    // The bucket is one: the first BURST requests pass, whichever process they reach, the rest are refused.
    expect(statuses.first).toEqual([200, 200, 429, 429, 429, 429]);
    expect(statuses.second).toEqual([200, 200, 429, 429, 429, 429]);
  }, 60_000);

  test("an endpoint's delivery concurrency is counted across two dispatchers: never more in flight than the limit", async () => {
    const LIMIT = 2;
    let inFlight = 0;
    let most = 0;
    const receiver = startReceiver(async () => {
      inFlight++;
      most = Math.max(most, inFlight);
      await Bun.sleep(300);
      inFlight--;
      return new Response("ok");
    });
    receivers.push(receiver);
    const service = await startService({
      dispatcherEnv: { DELIVERY_ENDPOINT_CONCURRENCY: String(LIMIT), DELIVERY_ENDPOINT_BUSY_DELAY_MS: "50" },
    });
    services.push(service);
    const second = await service.startDispatcher();
    const created = await fetch(`${service.base}/webhooks`, {
      method: "POST",
      headers: { authorization: `Bearer ${service.token}`, "content-type": "application/json" },
      body: JSON.stringify({
        name: "regions",
        url: `${receiver.url}/hook`,
        type: "graphql",
        query: "subscription { schemaRegions { operation } }",
      }),
    });
    expect(created.status).toBe(201);
    // One mutation per request: each is a delivery of its own, all to the one endpoint.
    const COUNT = 16;
    const burst = async (round: number) =>
      Promise.all(
        Array.from({ length: COUNT }, async (_, i) => {
          const answer = await fetch(`${service.base}/graphql/graphql`, {
            method: "POST",
            headers: { authorization: `Bearer ${service.token}`, "content-type": "application/json" },
            body: JSON.stringify({
              query: `mutation { schema { insertRegions(input: {Name: "r${round}-${i}", Timezone: "UTC"}) } }`,
            }),
          });
          expect(((await answer.json()) as { errors?: unknown }).errors).toBeUndefined();
        }),
      );
    const attempts = async (base: string) => {
      const text = await (await fetch(`${base}/metrics`)).text();
      return [...text.matchAll(/^webhook_delivery_attempts_total\{[^}]*\} (\d+)$/gm)].reduce(
        (sum, line) => sum + Number(line[1]),
        0,
      );
    };
    // Both dispatchers must deliver for the limit to be shared (so both compete for the endpoint's
    // slots); which one takes a job is BullMQ's race, so bursts go on (at most four) until both have.
    for (let round = 1; round <= 4; round++) {
      await burst(round);
      await eventually(() => expect(receiver.requests.length).toBeGreaterThanOrEqual(COUNT * round), {
        timeoutMs: 30_000,
      });
      if ((await attempts(service.dispatcherBase)) > 0 && (await attempts(second.base)) > 0) break;
    }
    expect(await attempts(service.dispatcherBase)).toBeGreaterThan(0);
    expect(await attempts(second.base)).toBeGreaterThan(0);
    // … and never more than the endpoint's limit in flight between them (per dispatcher, it would be 2 × LIMIT).
    expect(most).toBe(LIMIT);
  }, 90_000);
});
