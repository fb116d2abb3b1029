/** The sender against real servers: DNS pinned to the checked address, TLS verified against the URL's name. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DeliveryRequest } from "../../dispatcher/build-request.ts";
import { createHttpSender, RESPONSE_BODY_LIMIT } from "../../dispatcher/http-sender.ts";
import { createRedactor, NO_SECRETS, type Redactor } from "../../dispatcher/redact-secrets.ts";
import { parseAllowedRanges } from "../../dispatcher/ssrf/destination-policy.ts";
import { startReceiver } from "../support/receiver.ts";

const policy = { allowHttp: true, allowedRanges: parseAllowedRanges("127.0.0.0/8,::1") };

const requestTo = (url: string, redactor: Redactor = NO_SECRETS): DeliveryRequest => ({
  url: new URL(url),
  headers: { "content-type": "application/json" },
  body: "[]",
  endpoint: "unused",
  redactor,
});

/** A self-signed certificate for `receiver.test`, made with openssl for this run (no key is kept in the repo). */
function makeCertificate(): { cert: string; key: string } | null {
  const dir = mkdtempSync(join(tmpdir(), "tds-tls-"));
  try {
    const made = Bun.spawnSync(
      [
        "openssl",
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "1",
        "-subj",
        "/CN=receiver.test",
      ].concat([
        "-addext",
        "subjectAltName=DNS:receiver.test",
        "-keyout",
        `${dir}/key.pem`,
        "-out",
        `${dir}/cert.pem`,
      ]),
      { stderr: "pipe" },
    );
    if (made.exitCode !== 0) return null;
    return { cert: readFileSync(`${dir}/cert.pem`, "utf8"), key: readFileSync(`${dir}/key.pem`, "utf8") };
  } catch {
    return null; // no openssl on this machine
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("http sender over TLS, pinned to the resolved address", () => {
  const tls = makeCertificate();
  let server: ReturnType<typeof Bun.serve> | undefined;
  const seen: { host: string | null; url: string }[] = [];
  beforeAll(() => {
    if (!tls) return;
    server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      tls,
      fetch(request) {
        seen.push({ host: request.headers.get("host"), url: request.url });
        return new Response("secure");
      },
    });
  });
  afterAll(() => server?.stop(true));

  test.skipIf(!tls)(
    "connects to the looked-up address once, with the URL's host as Host and TLS name",
    async () => {
      const lookups: string[] = [];
      const send = createHttpSender({
        policy,
        timeoutMs: 5000,
        tlsCa: tls?.cert,
        lookupHost: async (host) => {
          lookups.push(host);
          return host === "receiver.test" ? ["127.0.0.1"] : [];
        },
      });
      const result = await send(requestTo(`https://receiver.test:${server?.port}/hook`));
      expect(result).toMatchObject({ status: 200, responseBody: "secure", error: null });
      expect(lookups).toEqual(["receiver.test"]);
      expect(seen.at(-1)?.host).toBe(`receiver.test:${server?.port}`);
    },
  );

  test.skipIf(!tls)("the certificate is checked against the URL's name, not the address", async () => {
    const send = createHttpSender({
      policy,
      timeoutMs: 5000,
      tlsCa: tls?.cert,
      lookupHost: async () => ["127.0.0.1"],
    });
    const result = await send(requestTo(`https://impostor.test:${server?.port}/hook`));
    expect(result.status).toBeNull();
    expect(result.error?.kind).toBe("connection");
    expect(result.error?.message).toContain("ERR_TLS_CERT_ALTNAME_INVALID");
  });
});

describe("http sender", () => {
  test("falls back to the next checked address when one refuses the connection", async () => {
    const receiver = startReceiver(); // listens on 127.0.0.1 only
    const port = new URL(receiver.url).port;
    const send = createHttpSender({ policy, timeoutMs: 5000, lookupHost: async () => ["::1", "127.0.0.1"] });
    const result = await send(requestTo(`http://dual.test:${port}/`));
    expect(result.status).toBe(200);
    expect(receiver.requests[0]?.headers.host).toBe(`dual.test:${port}`);
    await receiver.stop();
  });

  test("an attempt stopped by the caller's signal is reported as interrupted, not as the receiver's fault", async () => {
    const receiver = startReceiver(async () => {
      await Bun.sleep(2000);
      return new Response("late");
    });
    const send = createHttpSender({ policy, timeoutMs: 5000 });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const result = await send(requestTo(receiver.url), controller.signal);
    expect(result.interrupted).toBe(true);
    expect(result.durationMs).toBeLessThan(1000);
    await receiver.stop();
  });

  test("a name that does not resolve is a DNS error", async () => {
    const send = createHttpSender({ policy, timeoutMs: 5000 });
    const result = await send(requestTo("http://no-such-host.invalid/"));
    expect(result.error?.kind).toBe("dns");
  });
});

describe("http sender: secret config values stay out of the result", () => {
  const SECRET = "Sup3r-S3cret-Value";
  const redactor = createRedactor(new Map([["HOOK_KEY", SECRET]]));
  /** Every piece of `SECRET` of 4 characters or more, in any letter case: none may be in what is kept. */
  const leaks = (text: string) => {
    const lower = text.toLowerCase();
    const found: string[] = [];
    for (let start = 0; start < SECRET.length; start++)
      for (let end = start + 4; end <= SECRET.length; end++)
        if (lower.includes(SECRET.slice(start, end).toLowerCase())) found.push(SECRET.slice(start, end));
    return found;
  };

  test("a response echoing the secret is kept redacted, even where the 1 KB cut splits the value", async () => {
    // The value starts 6 bytes before the cut: kept as is, its first 6 characters would be in the log.
    const padding = "x".repeat(RESPONSE_BODY_LIMIT - 6);
    const receiver = startReceiver(() => new Response(`${padding}${SECRET} and ${SECRET}`, { status: 500 }));
    const send = createHttpSender({ policy, timeoutMs: 5000 });
    const result = await send(requestTo(receiver.url, redactor));
    expect(result.status).toBe(500);
    expect(Buffer.byteLength(result.responseBody ?? "")).toBeLessThanOrEqual(RESPONSE_BODY_LIMIT);
    expect(result.responseBody).toStartWith(padding);
    expect(leaks(result.responseBody ?? "")).toEqual([]);

    receiver.respondWith((request) => new Response(`echo ${request.headers["x-key"]}`, { status: 500 }));
    const request = { ...requestTo(receiver.url, redactor), headers: { "x-key": SECRET } };
    expect((await send(request)).responseBody).toBe("echo {{ HOOK_KEY }}");
    await receiver.stop();
  });

  test("a host that does not resolve, or resolves to a refused address, is named by its placeholder", async () => {
    const send = createHttpSender({
      policy,
      timeoutMs: 5000,
      lookupHost: async (host) => {
        if (host.startsWith("private.")) return ["10.1.2.3"];
        throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
      },
    });
    const unresolved = await send(requestTo(`http://${SECRET}.example.test/x`, redactor));
    expect(unresolved.error).toEqual({
      kind: "dns",
      message: "cannot resolve {{ HOOK_KEY }}.example.test (ENOTFOUND)",
    });
    const refused = await send(requestTo(`http://private.${SECRET}.example.test/x`, redactor));
    expect(refused.error).toEqual({
      kind: "refused",
      message:
        "destination refused: private.{{ HOOK_KEY }}.example.test resolves to 10.1.2.3 is a private address",
    });
  });
});

describe("http sender: the attempts in flight share one clock", () => {
  test("an attempt sets no timer of its own and adds no listener to its caller's signal", async () => {
    const receiver = startReceiver();
    const send = createHttpSender({ policy, timeoutMs: 5000 });
    const shutdown = new AbortController();
    let listeners = 0;
    const addEventListener = shutdown.signal.addEventListener.bind(shutdown.signal);
    shutdown.signal.addEventListener = (...args: Parameters<AbortSignal["addEventListener"]>) => {
      listeners++;
      addEventListener(...args);
    };
    const { setTimeout: originalSetTimeout } = globalThis;
    let timers = 0;
    globalThis.setTimeout = ((...args: Parameters<typeof setTimeout>) => {
      timers++;
      return originalSetTimeout(...args);
    }) as typeof setTimeout;
    try {
      const results = await Promise.all(
        Array.from({ length: 30 }, () => send(requestTo(receiver.url), shutdown.signal, () => undefined)),
      );
      expect(results.map((result) => result.status)).toEqual(Array(30).fill(200));
    } finally {
      globalThis.setTimeout = originalSetTimeout;
    }
    // Each attempt used to set two timers (its timeout, its slow mark) and listen on the caller's signal.
    expect(timers).toBe(0);
    expect(listeners).toBe(0);
    await receiver.stop();
  });

  test("an attempt without an answer times out within a tenth of its timeout after it", async () => {
    const receiver = startReceiver(async () => {
      await Bun.sleep(3000);
      return new Response("late");
    });
    const send = createHttpSender({ policy, timeoutMs: 300 });
    const result = await send(requestTo(receiver.url));
    expect(result.error).toEqual({ kind: "timeout", message: "no answer within 300 ms" });
    expect(result.durationMs).toBeGreaterThanOrEqual(300);
    expect(result.durationMs).toBeLessThan(300 + 30 + 100);
    await receiver.stop();
  });

  test("an attempt still waiting after half a second is marked slow, once; a fast one never", async () => {
    const receiver = startReceiver(async (request) => {
      if (request.path === "/slow") await Bun.sleep(900);
      return new Response("ok");
    });
    const send = createHttpSender({ policy, timeoutMs: 5000 });
    const slowAt: number[] = [];
    const started = Date.now();
    const [slow, fast] = await Promise.all([
      send(requestTo(`${receiver.url}/slow`), undefined, () => slowAt.push(Date.now() - started)),
      send(requestTo(`${receiver.url}/fast`), undefined, () => slowAt.push(-1)),
    ]);
    expect([slow.status, fast.status]).toEqual([200, 200]);
    expect(slowAt).toHaveLength(1);
    expect(slowAt[0]).toBeGreaterThanOrEqual(500);
    expect(slowAt[0]).toBeLessThan(500 + 100 + 150);
    await receiver.stop();
  });
});
