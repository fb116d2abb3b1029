// @test-engines sqlite: its fixture (test/support/delivery-log.ts) writes webhooks and deliveries with bun:sqlite; the dispatcher's PostgreSQL port runs in the conformance suite and the flows
/**
 * DNS rebinding: a name whose answer changes between the SSRF check and the
 * connection must not reach a refused address. The dispatcher's resolver is
 * injected (DispatcherEnvironment.lookupHost) and answers an allowlisted
 * address (127.0.0.2, where the real receiver listens) at the check, and a
 * refused one (127.0.0.1) afterwards. The name is `localhost`, so anything
 * that connects by name instead of by the checked address — the system
 * resolver, or a second call to the injected one — lands on the trap, a
 * receiver on 127.0.0.1 and ::1 at the same port.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { enqueueDeliveries } from "../../common/delivery-queue.ts";
import { eventually } from "../support/eventually.ts";
import { type Harness, openHarness } from "./harness.ts";

/** Only the receiver's address is allowed; the rest of loopback is refused. */
const POLICY_ENV = { DELIVERY_ALLOW_PRIVATE_NETWORKS: "127.0.0.2/32" };

/** Recording servers at one port on one or more addresses, all answering `status`. */
interface Listener {
  port: number;
  /** `address host path` of each request, in arrival order. */
  requests: string[];
  status: number;
  stop(): void;
}

/** Listens on every one of `hostnames` at `port` (0: a free one); throws when one is taken. */
function listen(hostnames: string[], port: number): Listener {
  const servers: ReturnType<typeof Bun.serve>[] = [];
  const listener: Listener = {
    port,
    requests: [],
    status: 200,
    stop: () => {
      for (const server of servers) server.stop(true);
    },
  };
  try {
    for (const hostname of hostnames) {
      const server = Bun.serve({
        hostname,
        port: listener.port,
        fetch(request) {
          const { pathname } = new URL(request.url);
          listener.requests.push(`${hostname} ${request.headers.get("host")} ${pathname}`);
          return new Response(null, { status: listener.status });
        },
      });
      servers.push(server);
      listener.port = Number(server.port);
    }
  } catch (error) {
    listener.stop();
    throw error;
  }
  return listener;
}

/** The receiver on 127.0.0.2 and the trap on 127.0.0.1 and ::1 at the same port (a few tries for one free on all). */
function startReceiverAndTrap(): { receiver: Listener; trap: Listener } {
  for (let tries = 0; tries < 10; tries++) {
    const receiver = listen(["127.0.0.2"], 0);
    try {
      return { receiver, trap: listen(["127.0.0.1", "::1"], receiver.port) };
    } catch {
      receiver.stop();
    }
  }
  throw new Error("no port free on 127.0.0.1, 127.0.0.2 and ::1 after 10 tries");
}

/** A resolver that answers `first` once and `later` on every call after. */
function rebindingLookup(first: string, later: string) {
  const calls: string[] = [];
  const lookupHost = async (hostname: string) => {
    calls.push(hostname);
    return [calls.length === 1 ? first : later];
  };
  return { calls, lookupHost };
}

describe("DNS rebinding", () => {
  let h: Harness;
  let receiver: Listener;
  let trap: Listener;
  beforeEach(() => {
    h = openHarness();
    ({ receiver, trap } = startReceiverAndTrap());
  });
  afterEach(async () => {
    await h.close();
    receiver.stop();
    trap.stop();
  });

  const finished = (deliveryId: string) =>
    eventually(() => {
      const status = h.store.delivery(deliveryId)?.status;
      return status === "succeeded" || status === "failed" ? (status as string) : false;
    });

  test("the trap is real: connecting by name reaches the refused address", async () => {
    await fetch(`http://localhost:${trap.port}/control`);
    expect(trap.requests).toHaveLength(1);
    expect(receiver.requests).toEqual([]);
  });

  test("the POST goes to the address that was checked, never to what the name resolves to later", async () => {
    h.store.addWebhook({ id: "w1", url: `http://localhost:${trap.port}/hook` });
    const dns = rebindingLookup("127.0.0.2", "127.0.0.1");
    await h.start(POLICY_ENV, { lookupHost: dns.lookupHost });
    const job = h.store.addDelivery("w1");
    await enqueueDeliveries(h.queue, [job]);

    expect(await finished(job.deliveryId)).toBe("succeeded");
    expect(dns.calls).toEqual(["localhost"]);
    expect(trap.requests).toEqual([]);
    // Virtual hosting still sees the URL's name, though the connection went to the address.
    expect(receiver.requests).toEqual([`127.0.0.2 localhost:${receiver.port} /hook`]);
  });

  test("each attempt resolves and checks again: a name rebound between attempts is refused, not connected", async () => {
    h.store.addWebhook({ id: "w1", url: `http://localhost:${trap.port}/hook` });
    receiver.status = 503;
    const dns = rebindingLookup("127.0.0.2", "127.0.0.1");
    await h.start(POLICY_ENV, { lookupHost: dns.lookupHost });
    const job = h.store.addDelivery("w1");
    await enqueueDeliveries(h.queue, [job]);

    expect(await finished(job.deliveryId)).toBe("failed");
    expect(dns.calls).toEqual(["localhost", "localhost"]);
    expect(trap.requests).toEqual([]);
    expect(receiver.requests).toEqual([`127.0.0.2 localhost:${receiver.port} /hook`]);
    expect(h.store.attempts(job.deliveryId).map((a) => [a.status_code, a.error])).toEqual([
      [503, "HTTP 503"],
      [null, "destination refused: localhost resolves to 127.0.0.1 is a loopback address"],
    ]);
  });
});
