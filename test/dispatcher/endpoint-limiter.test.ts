import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { connectRedis } from "../../common/redis.ts";
import { createEndpointLimiter, type EndpointLimiter } from "../../dispatcher/endpoint-limiter.ts";
import { openTestRedis, type TestRedis } from "../support/redis.ts";

describe("endpoint limiter", () => {
  let r: TestRedis;
  let limiter: (leaseMs?: number, lingerMs?: number) => EndpointLimiter;
  beforeEach(() => {
    r = openTestRedis();
    limiter = (leaseMs = 10_000, lingerMs = 0) =>
      createEndpointLimiter({
        redis: r.redis,
        keyPrefix: `${r.prefix}:endpoint-leases`,
        limit: 2,
        leaseMs,
        lingerMs,
      });
  });
  afterEach(() => r.close());

  test("the limit holds across limiter instances (processes) and per endpoint", async () => {
    const a = limiter();
    const b = limiter();
    const first = await a.acquire("hooks.example:443");
    const second = await b.acquire("hooks.example:443");
    expect(first).not.toBeNull();
    expect(second).not.toBeNull();
    expect(await a.acquire("hooks.example:443")).toBeNull();
    expect(await b.acquire("hooks.example:443")).toBeNull();
    expect(await a.acquire("other.example:443")).not.toBeNull();

    await first?.release();
    await first?.release(); // twice is harmless: it does not free someone else's slot
    expect(await b.acquire("hooks.example:443")).not.toBeNull();
    expect(await b.acquire("hooks.example:443")).toBeNull();
  });

  test("waiting for a slot: a slot this process holds is handed on when released; none held, no wait", async () => {
    const here = limiter();
    const [first, second] = [await here.acquire("w:1"), await here.acquire("w:1")];
    const started = Date.now();
    const waiting = here.acquire("w:1", 2000);
    await Bun.sleep(30);
    await first?.release();
    expect(await waiting).not.toBeNull();
    expect(Date.now() - started).toBeLessThan(1000);
    // Another process's acquire cannot know when these slots come free: it does not wait.
    const elsewhere = Date.now();
    expect(await limiter().acquire("w:1", 2000)).toBeNull();
    expect(Date.now() - elsewhere).toBeLessThan(500);
    // Nobody releases: the wait ends at its bound.
    expect(await here.acquire("w:1", 50)).toBeNull();
    await second?.release();
  });

  test("a released slot lingers with its process, still counted, then goes back", async () => {
    const here = limiter(10_000, 150);
    const [first, second] = [await here.acquire("l:1"), await here.acquire("l:1")];
    await first?.release();
    // Still counted in Redis: another process cannot take it, this one takes it back at once.
    expect(await limiter().acquire("l:1")).toBeNull();
    const again = await here.acquire("l:1");
    expect(again).not.toBeNull();
    expect(await here.acquire("l:1")).toBeNull();
    await again?.release();
    await Bun.sleep(250);
    const elsewhere = await limiter().acquire("l:1");
    expect(elsewhere).not.toBeNull();
    // Closing gives back what lingers at once.
    await second?.release();
    await here.close();
    expect(await limiter().acquire("l:1")).not.toBeNull();
  });

  test("taking and releasing a lingering slot sets and clears no timer; one interval gives back what lingers", async () => {
    const here = limiter(10_000, 40);
    const first = await here.acquire("t:1");
    await first?.release();
    const { setTimeout: originalSetTimeout, clearTimeout: originalClearTimeout } = globalThis;
    let timers = 0;
    globalThis.setTimeout = ((...args: Parameters<typeof setTimeout>) => {
      timers++;
      return originalSetTimeout(...args);
    }) as typeof setTimeout;
    globalThis.clearTimeout = ((...args: Parameters<typeof clearTimeout>) => {
      timers++;
      return originalClearTimeout(...args);
    }) as typeof clearTimeout;
    try {
      for (let i = 0; i < 100; i++) {
        const lease = here.acquire("t:1");
        // Taken within the call: the settled promise of the slot that lingers here.
        expect(Bun.peek.status(lease)).toBe("fulfilled");
        await (await lease)?.release();
      }
    } finally {
      globalThis.setTimeout = originalSetTimeout;
      globalThis.clearTimeout = originalClearTimeout;
    }
    // Each release used to set a timer, and each take clear it: 200 here.
    expect(timers).toBe(0);
    // Still counted in Redis while it lingers; given back within 1.5 × the linger time once unused.
    expect(await limiter().acquire("t:1")).not.toBeNull();
    expect(await limiter().acquire("t:1")).toBeNull();
    await Bun.sleep(40 * 1.5 + 30);
    expect(await limiter().acquire("t:1")).not.toBeNull();
  });

  test("a dead holder's leases expire and the slots come back", async () => {
    // Its own connection, cut as a killed process's would be: its renewals stop with it.
    const connection = connectRedis(r.url, () => undefined);
    const dead = createEndpointLimiter({
      redis: connection,
      keyPrefix: `${r.prefix}:endpoint-leases`,
      limit: 2,
      leaseMs: 150,
    });
    expect(await dead.acquire("e:1")).not.toBeNull();
    expect(await dead.acquire("e:1")).not.toBeNull();
    connection.disconnect();
    expect(await limiter().acquire("e:1")).toBeNull();
    await Bun.sleep(200);
    expect(await limiter().acquire("e:1")).not.toBeNull();
  });

  test("a live holder's lease is renewed past its lease time until released", async () => {
    const live = limiter(150);
    const [first, second] = [await live.acquire("e:2"), await live.acquire("e:2")];
    expect(second).not.toBeNull();
    await Bun.sleep(400);
    expect(await limiter().acquire("e:2")).toBeNull();
    await first?.release();
    expect(await limiter().acquire("e:2")).not.toBeNull();
    await second?.release();
  });
});
