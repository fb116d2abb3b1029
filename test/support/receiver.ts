/**
 * A recording HTTP receiver on a real loopback port (`Bun.serve({port: 0})`).
 * Every request is kept; the test decides each answer through `respondWith`.
 */

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  receivedAt: number;
}

export type Responder = (request: ReceivedRequest, index: number) => Response | Promise<Response>;

export interface Receiver {
  url: string;
  port: number;
  requests: ReceivedRequest[];
  respondWith(responder: Responder): void;
  stop(): Promise<void>;
}

/**
 * `options.port` listens on a given port (to bring a stopped receiver back where
 * it was); `options.requests` appends to an earlier receiver's record.
 */
export function startReceiver(
  responder: Responder = () => new Response("ok"),
  options: { port?: number; requests?: ReceivedRequest[] } = {},
): Receiver {
  const requests: ReceivedRequest[] = options.requests ?? [];
  let answer = responder;
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: options.port ?? 0,
    async fetch(request) {
      const received: ReceivedRequest = {
        method: request.method,
        path: new URL(request.url).pathname,
        headers: Object.fromEntries(request.headers.entries()),
        body: await request.text(),
        receivedAt: Date.now(),
      };
      requests.push(received);
      return answer(received, requests.length - 1);
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    port: server.port as number,
    requests,
    respondWith: (next) => {
      answer = next;
    },
    stop: () => server.stop(true),
  };
}
