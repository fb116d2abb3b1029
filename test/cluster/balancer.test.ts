/**
 * The local cluster's balancer over real loopback servers: requests go round
 * robin and arrive whole (method, path and query, headers, body), a backend
 * that refuses connections is skipped, none left answers 503 in the error
 * shape, and a WebSocket is relayed both ways with the backend's subprotocol
 * and close code.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { backendOrder, forwardedHeaders, startBalancer } from "../../scripts/balancer.ts";
import { freePort } from "../../scripts/private-redis.ts";
import { type ReceivedRequest, type Receiver, startReceiver } from "../support/receiver.ts";

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(stops.splice(0).map((stop) => stop()));
});

function backends(n: number): Receiver[] {
  const receivers = Array.from({ length: n }, (_, i) =>
    startReceiver((request) => Response.json({ backend: i, path: request.path }, { status: 201 })),
  );
  for (const receiver of receivers) stops.push(() => receiver.stop());
  return receivers;
}

function balancerOver(urls: string[]) {
  const balancer = startBalancer({ backends: urls, port: 0 });
  stops.push(() => balancer.stop());
  return balancer;
}

describe("round-robin order", () => {
  test.each([
    [0, 3, [0, 1, 2]],
    [1, 3, [1, 2, 0]],
    [5, 3, [2, 0, 1]],
    [7, 1, [0]],
  ])("turn %i over %i backends tries %j", (turn, n, order) => {
    expect(backendOrder(turn, n)).toEqual(order);
  });
});

describe("forwarded headers", () => {
  test("hop-by-hop and handshake headers stay behind; the client's address is appended", () => {
    const incoming = new Headers({
      authorization: "Bearer t",
      connection: "keep-alive, x-private",
      "x-private": "for this hop",
      "keep-alive": "timeout=5",
      "transfer-encoding": "chunked",
      "sec-websocket-key": "abc",
      "x-forwarded-for": "10.0.0.1",
      "content-type": "application/json",
    });
    const out = forwardedHeaders(incoming, "127.0.0.1", new URL("http://example.test:3000/x"));
    expect(Object.fromEntries(out)).toEqual({
      authorization: "Bearer t",
      "content-type": "application/json",
      "x-forwarded-for": "10.0.0.1, 127.0.0.1",
      "x-forwarded-host": "example.test:3000",
      "x-forwarded-proto": "http",
    });
  });
});

describe("balancer", () => {
  test("sends requests to each backend in turn, whole", async () => {
    const receivers = backends(2);
    const balancer = balancerOver(receivers.map((r) => r.url));
    const answers = [];
    for (let i = 0; i < 4; i++) {
      const response = await fetch(`${balancer.url}/graphql/graphql?x=${i}`, {
        method: "POST",
        headers: { authorization: "Bearer token", "content-type": "application/json", "x-custom": `v${i}` },
        body: JSON.stringify({ query: `{ n${i} }` }),
      });
      answers.push({ status: response.status, body: (await response.json()) as { backend: number } });
    }
    expect(answers.map((a) => a.body.backend)).toEqual([0, 1, 0, 1]);
    expect(balancer.answered()).toEqual([2, 2]);
    expect(answers.every((a) => a.status === 201)).toBe(true);
    const first = receivers[0]?.requests[0] as ReceivedRequest;
    expect(first.method).toBe("POST");
    expect(first.path).toBe("/graphql/graphql");
    expect(first.headers.authorization).toBe("Bearer token");
    expect(first.headers["x-custom"]).toBe("v0");
    expect(first.body).toBe(JSON.stringify({ query: "{ n0 }" }));
    expect(receivers[1]?.requests[0]?.body).toBe(JSON.stringify({ query: "{ n1 }" }));
  });

  test("skips a backend that refuses connections; with none left, answers 503 in the error shape", async () => {
    const [alive] = backends(1);
    const dead = `http://127.0.0.1:${freePort()}`;
    const balancer = balancerOver([dead, alive?.url as string, dead]);
    const statuses = [];
    for (let i = 0; i < 6; i++) statuses.push((await fetch(`${balancer.url}/health`)).status);
    expect(statuses).toEqual([201, 201, 201, 201, 201, 201]);
    expect(alive?.requests.length).toBe(6);

    const none = balancerOver([dead]);
    const answer = await fetch(`${none.url}/health`);
    expect(answer.status).toBe(503);
    expect(await answer.json()).toEqual({
      errorType: "unavailable",
      message: "no API process accepted the connection",
    });
  });

  test("a connection dropped mid-request: a GET goes to the next backend, a POST is answered 502", async () => {
    // Accepts, then drops every connection unanswered, as a process killed mid-request does.
    const dropping = Bun.listen({
      hostname: "127.0.0.1",
      port: 0,
      socket: {
        data(socket) {
          socket.terminate();
        },
      },
    });
    stops.push(async () => dropping.stop(true));
    const [alive] = backends(1);
    const balancer = balancerOver([`http://127.0.0.1:${dropping.port}`, alive?.url as string]);
    // Turn 0 tries the dropping backend first: the POST is not sent on.
    const post = await fetch(`${balancer.url}/graphql/graphql`, { method: "POST", body: "{}" });
    expect(post.status).toBe(502);
    const body = (await post.json()) as { errorType: string; message: string };
    expect(body.errorType).toBe("unavailable");
    expect(body.message).toContain(`the API process at http://127.0.0.1:${dropping.port} failed`);
    // Turns 1 (the live one first) and 2 (the dropping one first, then the live one).
    const gets = [];
    for (let i = 0; i < 2; i++) gets.push((await fetch(`${balancer.url}/auth/whoami`)).status);
    expect(gets).toEqual([201, 201]);
    expect(alive?.requests.map((r) => r.method)).toEqual(["GET", "GET"]);
  });

  test("relays a WebSocket both ways with the backend's subprotocol and its close code", async () => {
    const seenByBackend: string[] = [];
    const backend = Bun.serve<{ auth: string | null }>({
      hostname: "127.0.0.1",
      port: 0,
      fetch(request, server) {
        const upgraded = server.upgrade(request, {
          headers: { "Sec-WebSocket-Protocol": "graphql-transport-ws" },
          data: { auth: request.headers.get("authorization") },
        });
        return upgraded ? undefined : new Response("no", { status: 400 });
      },
      websocket: {
        open(ws) {
          ws.send(`hello ${ws.data.auth}`);
        },
        message(ws, message) {
          seenByBackend.push(String(message));
          if (message === "bye") ws.close(4403, "Forbidden");
          else ws.send(`echo ${message}`);
        },
      },
    });
    stops.push(() => backend.stop(true));
    const dead = `http://127.0.0.1:${freePort()}`;
    const balancer = balancerOver([dead, `http://127.0.0.1:${backend.port}`]);
    const socket = new WebSocket(`${balancer.url.replace("http", "ws")}/graphql/subscriptions`, {
      headers: { authorization: "Bearer t" },
      protocols: ["graphql-transport-ws", "graphql-ws"],
    });
    const received: string[] = [];
    const closed = new Promise<{ code: number; reason: string }>((resolve) => {
      socket.onclose = (event) => resolve({ code: event.code, reason: event.reason });
    });
    socket.onmessage = (event) => {
      received.push(String(event.data));
      if (received.length === 2) socket.send("bye");
    };
    socket.onopen = () => socket.send("ping");
    expect(await closed).toEqual({ code: 4403, reason: "Forbidden" });
    expect(socket.protocol).toBe("graphql-transport-ws");
    expect(received).toEqual(["hello Bearer t", "echo ping"]);
    expect(seenByBackend).toEqual(["ping", "bye"]);
  });
});
