/** The sender against real servers: DNS pinned to the checked address, TLS verified against the URL's name. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DeliveryRequest } from "../../dispatcher/build-request.ts";
import { createHttpSender } from "../../dispatcher/http-sender.ts";
import { parseAllowedRanges } from "../../dispatcher/ssrf/destination-policy.ts";
import { startReceiver } from "../support/receiver.ts";

const policy = { allowHttp: true, allowedRanges: parseAllowedRanges("127.0.0.0/8,::1") };

const requestTo = (url: string): DeliveryRequest => ({
  url: new URL(url),
  headers: new Headers({ "content-type": "application/json" }),
  body: "[]",
  endpoint: "unused",
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
