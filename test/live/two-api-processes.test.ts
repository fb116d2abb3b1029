/**
 * Live subscriptions across two real API processes on one store and one Redis (as two replicas
 * behind a balancer): a graphql-ws client connected to process B receives the changes of
 * mutations sent to process A, through the change feed and the per-tenant pub/sub channel, whichever
 * of the two reads the tenant's partition of the change log (both read some on PostgreSQL; on SQLite,
 * with one partition, A, ready first, reads it and the change leaves A's process for B's). A
 * publishes the tenant's changes only because B told it that it listens (each process knows who
 * listens once its roll call is answered, at its start).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type Client, createClient } from "graphql-ws";
import { eventually } from "../support/eventually.ts";
import { type RunningService, startService } from "../support/service-processes.ts";

let service: RunningService;
let b = "";

beforeAll(async () => {
  service = await startService();
  ({ base: b } = await service.startApi());
}, 60_000);
afterAll(async () => {
  await service?.stop();
});

async function graphql(base: string, query: string): Promise<Record<string, string>> {
  const response = await fetch(`${base}/graphql/graphql`, {
    method: "POST",
    headers: { authorization: `Bearer ${service.token}`, "content-type": "application/json" },
    body: JSON.stringify({ query }),
  });
  const body = (await response.json()) as { data?: { schema: Record<string, string> }; errors?: unknown };
  expect(body.errors).toBeUndefined();
  return body.data?.schema ?? {};
}

/** B's `live_subscriptions` gauge: the subscription is held there once it reads `count`. */
async function heldOnB(count: number): Promise<boolean> {
  const text = await (await fetch(`${b}/metrics`)).text();
  return new RegExp(`^live_subscriptions ${count}$`, "m").test(text);
}

test("a graphql-ws client on process B receives the change of a mutation sent to process A", async () => {
  const client: Client = createClient({
    url: `${b.replace("http", "ws")}/graphql/subscriptions`,
    webSocketImpl: WebSocket,
    retryAttempts: 0,
    lazy: false,
    connectionParams: { Authorization: `Bearer ${service.token}` },
    onNonLazyError: () => undefined,
  });
  const seen: unknown[] = [];
  const errors: unknown[] = [];
  // Pinned by name: the index files it under Name = 'Across', so only that region's changes reach it.
  client.subscribe(
    { query: `subscription { schemaRegions(filter: "Name == 'Across'") { operation data { UID Name } } }` },
    { next: (v) => void seen.push(v), error: (e) => void errors.push(e), complete: () => undefined },
  );
  await eventually(() => heldOnB(1));

  await graphql(
    service.base,
    `mutation { schema { insertRegions(input: {Name: "Elsewhere", Timezone: "UTC"}) } }`,
  );
  const { insertRegions: uid } = await graphql(
    service.base,
    `mutation { schema { insertRegions(input: {Name: "Across", Timezone: "UTC"}) } }`,
  );
  await eventually(() => seen.length === 1, { timeoutMs: 10_000 });
  expect(seen[0]).toEqual({
    data: { schemaRegions: { operation: "INSERT", data: { UID: uid, Name: "Across" } } },
  });
  // The other region's change never comes: it was committed first, so it would have come first.
  await graphql(service.base, `mutation { schema { deleteRegions(UID: "${uid}") } }`);
  await eventually(() => seen.length === 2, { timeoutMs: 10_000 });
  expect((seen[1] as { data: { schemaRegions: { operation: string } } }).data.schemaRegions.operation).toBe(
    "DELETE",
  );
  expect(errors).toEqual([]);
  await client.dispose();
}, 30_000);
