/**
 * The HTTP/1.1 client against real TCP servers on loopback that answer with
 * exactly the bytes a test gives: kept-alive connections, a kept connection
 * the receiver closed, aborts, and answers that are not HTTP.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { createHttp1Client, type Http1Client } from "../../dispatcher/http1/http1-client.ts";

interface RawServer {
  port: number;
  /** Connections accepted so far. */
  connections: () => number;
  /** Requests received (head and body, as text). */
  requests: string[];
  stop: () => void;
}

/**
 * A server reading each request (by Content-Length) and answering what `answer` returns for it:
 * bytes to send, or "close" to close the connection without answering, or "silent" to say nothing.
 */
function rawServer(answer: (n: number, perConnection: number) => string | "close" | "silent"): RawServer {
  let connections = 0;
  const requests: string[] = [];
  const server = Bun.listen<{ buffer: string; count: number }>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(socket) {
        connections++;
        socket.data = { buffer: "", count: 0 };
      },
      data(socket, bytes) {
        socket.data.buffer += bytes.toString("latin1");
        for (;;) {
          const end = socket.data.buffer.indexOf("\r\n\r\n");
          if (end < 0) return;
          const length = Number(/content-length: (\d+)/i.exec(socket.data.buffer.slice(0, end))?.[1] ?? 0);
          if (socket.data.buffer.length < end + 4 + length) return;
          requests.push(socket.data.buffer.slice(0, end + 4 + length));
          socket.data.buffer = socket.data.buffer.slice(end + 4 + length);
          const reply = answer(requests.length, ++socket.data.count);
          if (reply === "close") socket.end();
          else if (reply !== "silent") socket.write(reply);
        }
      },
    },
  });
  return { port: server.port, connections: () => connections, requests, stop: () => server.stop(true) };
}

const OK = "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";
const request = (body: string) =>
  Buffer.from(
    `POST /hook HTTP/1.1\r\nhost: receiver\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );

let client: Http1Client;
let server: RawServer | undefined;
afterEach(() => {
  client?.close();
  server?.stop();
});

const send = (body = "[]", signal = new AbortController().signal) =>
  client.send({ address: "127.0.0.1", port: server?.port ?? 0, tls: null }, request(body), signal);

describe("http1 client", () => {
  test("requests one after another share one kept-alive connection", async () => {
    server = rawServer(() => OK);
    client = createHttp1Client({ keep: 1024, idleMs: 1000 });
    for (const body of ["[1]", "[2]", "[3]"]) {
      const response = await send(body);
      expect(response.status).toBe(200);
      expect(Buffer.from(response.body).toString()).toBe("ok");
    }
    expect(server.connections()).toBe(1);
    expect(server.requests.map((r) => r.slice(r.indexOf("\r\n\r\n") + 4))).toEqual(["[1]", "[2]", "[3]"]);
    expect(
      server.requests[0]?.startsWith("POST /hook HTTP/1.1\r\nhost: receiver\r\ncontent-length: 3\r\n"),
    ).toBe(true);
  });

  test("a connection idle longer than idleMs is closed, and the next request opens another", async () => {
    server = rawServer(() => OK);
    client = createHttp1Client({ keep: 1024, idleMs: 30 });
    await send();
    await Bun.sleep(100);
    await send();
    expect(server.connections()).toBe(2);
  });

  test("a kept connection the receiver closed meanwhile: the request goes again on a new one", async () => {
    // Every connection's second request is met with a close, as a receiver timing out idle connections does.
    server = rawServer((_, perConnection) => (perConnection === 2 ? "close" : OK));
    client = createHttp1Client({ keep: 1024, idleMs: 1000 });
    expect((await send("[1]")).status).toBe(200);
    expect((await send("[2]")).status).toBe(200);
    expect(server.connections()).toBe(2);
    expect(server.requests.map((r) => r.slice(r.indexOf("\r\n\r\n") + 4))).toEqual(["[1]", "[2]", "[2]"]);
  });

  test("a connection closed without an answer, on a new connection, is an error (not sent again)", async () => {
    server = rawServer(() => "close");
    client = createHttp1Client({ keep: 1024, idleMs: 1000 });
    await expect(send()).rejects.toThrow("the connection closed without a response");
    expect(server.requests.length).toBe(1);
  });

  test("an abort ends the request and its connection", async () => {
    server = rawServer(() => "silent");
    client = createHttp1Client({ keep: 1024, idleMs: 1000 });
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error("stopped by the caller")), 50);
    await expect(send("[]", controller.signal)).rejects.toThrow("stopped by the caller");
    expect(server.connections()).toBe(1);
  });

  test("a request whose signal has already aborted is not sent, on a kept connection or a new one", async () => {
    server = rawServer(() => OK);
    client = createHttp1Client({ keep: 1024, idleMs: 1000 });
    await send();
    const aborted = AbortSignal.abort(new Error("too late"));
    await expect(send("[kept]", aborted)).rejects.toThrow("too late");
    client.close();
    await expect(send("[new]", aborted)).rejects.toThrow("too late");
    expect((await send("[after]")).status).toBe(200);
    expect(server.requests.map((r) => r.slice(r.indexOf("\r\n\r\n") + 4))).toEqual(["[]", "[after]"]);
  });

  test("an answer that is not HTTP is an error, and its connection is not kept", async () => {
    server = rawServer((n) => (n === 1 ? "SSH-2.0-OpenSSH_9.6\r\n\r\n" : OK));
    client = createHttp1Client({ keep: 1024, idleMs: 1000 });
    await expect(send()).rejects.toThrow("not an HTTP/1.x response");
    expect((await send()).status).toBe(200);
    expect(server.connections()).toBe(2);
  });

  test("a chunked answer and a large request body arrive whole", async () => {
    server = rawServer(() => "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n");
    client = createHttp1Client({ keep: 1024, idleMs: 1000 });
    const body = JSON.stringify(Array.from({ length: 60_000 }, (_, i) => ({ i })));
    const response = await send(body);
    expect(Buffer.from(response.body).toString()).toBe("ok");
    expect(server.requests[0]?.endsWith(body)).toBe(true);
  });

  test("a refused connection is an error naming ECONNREFUSED", async () => {
    server = rawServer(() => OK);
    const port = server.port;
    server.stop();
    server = undefined;
    client = createHttp1Client({ keep: 1024, idleMs: 1000 });
    const refused = client.send(
      { address: "127.0.0.1", port, tls: null },
      request("[]"),
      new AbortController().signal,
    );
    await expect(refused).rejects.toMatchObject({ code: "ECONNREFUSED" });
  });
});
