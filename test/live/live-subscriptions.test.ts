/**
 * Live subscriptions end to end with real clients: two in-process API apps on one store and one
 * Redis (A commits and runs the feed, B holds the sockets), the graphql-ws library's client and a
 * minimal hand-written client of the older graphql-ws protocol (subscriptions-transport-ws is
 * unmaintained and needs the `ws` package; its wire protocol is small enough to speak directly).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Client, createClient } from "graphql-ws";
import { serverOptions } from "../../api/http/server-options.ts";
import { createTestApp, type ProvisionedTenant, type TestApp } from "../support/app.ts";
import { eventually } from "../support/eventually.ts";
import { graphqlClient } from "../support/graphql.ts";

let a: TestApp;
let b: TestApp;
let acme: ProvisionedTenant;
let other: ProvisionedTenant;
let url = "";
let regionId = "";
let otherRegionId = "";

const SUB = `subscription { schemaJobs(filter: "Duration > 10") { operation data { UID Duration JobStatus } previous { JobStatus } } }`;

beforeAll(async () => {
  a = await createTestApp();
  acme = await a.provision("acme");
  other = await a.provision("other");
  b = await createTestApp({
    ...a.storeEnv,
    REDIS_PREFIX: a.config.REDIS_PREFIX,
    LIVE_INIT_TIMEOUT_MS: "300",
    LIVE_MAX_CONNECTIONS_PER_TOKEN: "3",
    LIVE_MAX_SUBSCRIPTIONS_PER_CONNECTION: "2",
    LIVE_AUTH_RECHECK_MS: "200",
    LIVE_MAX_MESSAGE_BYTES: "4096",
  });
  b.app.listen(serverOptions({ ...b.config, PORT: 0, HOST: "127.0.0.1" }));
  b.live.start();
  url = `ws://127.0.0.1:${b.app.server?.port}/graphql/subscriptions`;
  const region = async (token: string) => {
    const r = await graphqlClient(
      a,
      token,
    )(`mutation { schema { insertRegions(input: {Name: "N", Timezone: "UTC"}) } }`);
    return (r.data as { schema: { insertRegions: string } }).schema.insertRegions;
  };
  regionId = await region(acme.adminToken);
  otherRegionId = await region(other.adminToken);
  await a.feed.processBatch();
});
afterAll(async () => {
  await b.app.stop(true);
  await b.close();
  await a.close();
});

/** A mutation through app A, then A's feed run once (as its tailer would). */
async function mutate(token: string, document: string): Promise<Record<string, string>> {
  const result = await graphqlClient(a, token)(document);
  expect(result.errors).toBeUndefined();
  await a.feed.processBatch();
  return (result.data as { schema: Record<string, string> }).schema;
}
const insertJob = (token: string, region: string, duration: number) =>
  mutate(token, `mutation { schema { insertJobs(input: {Duration: ${duration}, RegionId: "${region}"}) } }`);

function client(token: string | null, extra: Partial<Parameters<typeof createClient>[0]> = {}): Client {
  return createClient({
    url,
    webSocketImpl: WebSocket,
    retryAttempts: 0,
    lazy: false,
    connectionParams: token ? { Authorization: `Bearer ${token}` } : {},
    onNonLazyError: () => undefined,
    ...extra,
  });
}

/** The close a graphql-ws client's socket ended with. */
function closeOf(c: Client): Promise<{ code: number; reason: string }> {
  return new Promise((resolve) => c.on("closed", (event) => resolve(event as CloseEvent)));
}

/** A raw socket: its messages and its close, for the protocol's edges. */
function raw(protocols: string | string[] = "graphql-transport-ws") {
  const socket = new WebSocket(url, protocols);
  const messages: Record<string, unknown>[] = [];
  socket.onmessage = (event) => messages.push(JSON.parse(String(event.data)));
  const opened = new Promise<void>((resolve) => socket.addEventListener("open", () => resolve()));
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    socket.addEventListener("close", (event) => resolve({ code: event.code, reason: event.reason })),
  );
  const send = (message: unknown) =>
    socket.send(typeof message === "string" ? message : JSON.stringify(message));
  return { socket, messages, opened, closed, send };
}

const subscriptionsHeld = async (count: number) => eventually(() => b.live.counts().subscriptions === count);

describe("delivery across processes", () => {
  test("graphql-ws client on B: INSERT, UPDATE, DELETE of a commit through A, in order, filtered, one tenant only", async () => {
    const c = client(acme.adminToken);
    const otherClient = client(other.adminToken);
    const seen: unknown[] = [];
    const otherSeen: unknown[] = [];
    const sink = (into: unknown[]) => ({
      next: (v: unknown) => void into.push(v),
      error: () => undefined,
      complete: () => undefined,
    });
    c.subscribe({ query: SUB }, sink(seen));
    otherClient.subscribe({ query: SUB }, sink(otherSeen));
    await subscriptionsHeld(2);

    const { insertJobs: job } = await insertJob(acme.adminToken, regionId, 30);
    await insertJob(acme.adminToken, regionId, 5); // filtered out
    await mutate(
      acme.adminToken,
      `mutation { schema { updateJobs(input: {UID: "${job}", JobStatus: "Cancelled"}) } }`,
    );
    await mutate(acme.adminToken, `mutation { schema { deleteJobs(UID: "${job}") } }`);
    const { insertJobs: otherJob } = await insertJob(other.adminToken, otherRegionId, 40);

    await eventually(() => seen.length === 3 && otherSeen.length === 1);
    const ops = seen.map(
      (v) => (v as { data: { schemaJobs: { operation: string } } }).data.schemaJobs.operation,
    );
    expect(ops).toEqual(["INSERT", "UPDATE", "DELETE"]);
    expect(seen[1]).toEqual({
      data: {
        schemaJobs: {
          operation: "UPDATE",
          data: { UID: job, Duration: 30, JobStatus: "Cancelled" },
          previous: { JobStatus: "Queued" },
        },
      },
    });
    expect(JSON.stringify(seen)).not.toContain(otherJob as string);
    expect(JSON.stringify(otherSeen)).toContain(otherJob as string);
    await Bun.sleep(100);
    expect(seen.length).toBe(3);
    await c.dispose();
    await otherClient.dispose();
    await eventually(() => b.live.counts().connections === 0);
  });

  test("older protocol (hand-written client): starts before the ack, data in order, stop → complete", async () => {
    const s = raw("graphql-ws");
    await s.opened;
    s.send({ type: "connection_init", payload: { headers: { Authorization: `Bearer ${acme.adminToken}` } } });
    s.send({ type: "start", id: "1", payload: { query: SUB } });
    await subscriptionsHeld(1);
    const { insertJobs: job } = await insertJob(acme.adminToken, regionId, 50);
    await mutate(acme.adminToken, `mutation { schema { deleteJobs(UID: "${job}") } }`);
    await eventually(() => s.messages.filter((m) => m.type === "data").length === 2);
    expect(s.messages.slice(0, 2).map((m) => m.type)).toEqual(["connection_ack", "ka"]);
    const data = s.messages.filter((m) => m.type === "data") as {
      id: string;
      payload: { data: { schemaJobs: { operation: string } } };
    }[];
    expect(data.map((m) => [m.id, m.payload.data.schemaJobs.operation])).toEqual([
      ["1", "INSERT"],
      ["1", "DELETE"],
    ]);
    s.send({ type: "stop", id: "1" });
    await eventually(() => s.messages.some((m) => m.type === "complete" && m.id === "1"));
    await subscriptionsHeld(0);
    s.send({ type: "connection_terminate" });
    expect((await s.closed).code).toBe(1000);
  });

  test("a subscription that does not parse gets an error message, the connection stays", async () => {
    const c = client(acme.adminToken);
    const error = await new Promise<unknown>((resolve) =>
      c.subscribe(
        { query: `subscription { schemaJobs(filter: "Nope = 1") { operation } }` },
        {
          next: () => undefined,
          error: resolve,
          complete: () => undefined,
        },
      ),
    );
    expect(JSON.stringify(error)).toContain("VALIDATION_FAILED");
    await c.dispose();
  });

  test("the token from the upgrade request's Authorization header", async () => {
    const socket = new WebSocket(url, {
      protocols: ["graphql-transport-ws"],
      headers: { Authorization: `Bearer ${acme.adminToken}` },
    } as unknown as string[]);
    const messages: string[] = [];
    socket.onmessage = (event) => messages.push(String(event.data));
    await new Promise((resolve) => socket.addEventListener("open", resolve));
    socket.send(JSON.stringify({ type: "connection_init" }));
    await eventually(() => messages.includes(JSON.stringify({ type: "connection_ack" })));
    socket.close();
  });
});

describe("closes", () => {
  test("no token → 4401; a bad token → 4403", async () => {
    expect((await closeOf(client(null))).code).toBe(4401);
    expect((await closeOf(client("not-a-token"))).code).toBe(4403);
  });

  const edges: [string, (s: ReturnType<typeof raw>) => void, number, (string | string[])?][] = [
    ["an invalid message", (s) => s.send("{nope"), 4400],
    [
      "a subscribe before the ack",
      (s) => s.send({ type: "subscribe", id: "1", payload: { query: SUB } }),
      4401,
    ],
    ["no connection_init in time", () => undefined, 4408],
    [
      "a message over LIVE_MAX_MESSAGE_BYTES",
      (s) => s.send({ type: "connection_init", payload: { pad: "x".repeat(5000) } }),
      1009,
    ],
    ["neither subprotocol offered", () => undefined, 4406, "mqtt"],
  ];
  for (const [name, act, code, protocols] of edges)
    test(`${name} → ${code}`, async () => {
      const s = raw(protocols);
      await s.opened;
      act(s);
      expect((await s.closed).code).toBe(code);
    });

  test("a second subscribe with one id → 4409; a second init → 4429", async () => {
    for (const [second, code] of [
      [{ type: "subscribe", id: "1", payload: { query: SUB } }, 4409],
      [{ type: "connection_init" }, 4429],
    ] as const) {
      const s = raw();
      await s.opened;
      s.send({ type: "connection_init", payload: { Authorization: `Bearer ${acme.adminToken}` } });
      await eventually(() => s.messages.some((m) => m.type === "connection_ack"));
      s.send({ type: "subscribe", id: "1", payload: { query: SUB } });
      s.send(second);
      expect((await s.closed).code).toBe(code);
    }
  });

  test("past LIVE_MAX_CONNECTIONS_PER_TOKEN (3) the next connection is closed 4429; past 2 subscriptions an error", async () => {
    const held = [client(acme.adminToken), client(acme.adminToken), client(acme.adminToken)];
    await eventually(() => b.live.counts().connections === 3);
    expect((await closeOf(client(acme.adminToken))).code).toBe(4429);
    const errors: unknown[] = [];
    const sink = {
      next: () => undefined,
      error: (e: unknown) => void errors.push(e),
      complete: () => undefined,
    };
    for (let i = 0; i < 3; i++) (held[0] as Client).subscribe({ query: SUB }, sink);
    await eventually(() => errors.length === 1);
    expect(JSON.stringify(errors[0])).toContain("LIMIT_EXCEEDED");
    expect(b.live.counts().subscriptions).toBe(2);
    for (const c of held) await c.dispose();
    await eventually(() => b.live.counts().connections === 0);
  });

  test("a revoked token's connection is closed 4403 within 2 s (the re-check runs on B; the revocation went through A)", async () => {
    const { token, user } = await a.addUser(acme.tenant.id, ["administrator"]);
    const c = client(token);
    const closed = closeOf(c);
    await eventually(() => b.live.counts().connections === 1);
    const jti = (await a.store.listTokens(acme.tenant.id)).find((t) => t.userId === user.id)?.jti as string;
    const revokedAt = Date.now();
    await a.auth.revokeToken(acme.tenant.id, jti);
    const { code, reason } = await closed;
    expect(code).toBe(4403);
    expect(reason).toContain("revoked");
    expect(Date.now() - revokedAt).toBeLessThan(2000);
  });
});

describe("shutdown", () => {
  test("every socket, authenticated or not, is closed with 1001", async () => {
    const c = client(acme.adminToken);
    const closed = closeOf(c);
    const waiting = raw();
    await waiting.opened;
    await eventually(() => b.live.counts().connections === 1);
    b.live.shutdown();
    expect((await closed).code).toBe(1001);
    expect((await waiting.closed).code).toBe(1001);
  });
});
