/**
 * The logger's two guarantees for operations: credentials never reach a line, whatever field
 * carries them; a line written while a request's work runs names the request.
 */
import { describe, expect, test } from "bun:test";
import { createLogger, isSecretKey, REDACTED } from "../../common/log.ts";
import {
  currentRequestId,
  isSaneRequestId,
  MAX_REQUEST_ID_LENGTH,
  requestIdFrom,
  runInRequestContext,
  runOutsideRequestContext,
} from "../../common/request-context.ts";

const capture = () => {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger("debug", { process: "test" }, (line) => lines.push(JSON.parse(line)));
  return { log, lines };
};

describe("secret fields", () => {
  const secretKeys = [
    "authorization",
    "Authorization",
    "proxy-authorization",
    "cookie",
    "set-cookie",
    "token",
    "serviceToken",
    "SERVICE_TOKEN",
    "METRICS_TOKEN",
    "secret",
    "JWT_SECRET",
    "webhookSecret",
    "password",
    "x-api-key",
    "apiKey",
    "SECRETS_KEY",
  ];
  const plainKeys = ["tokenId", "jti", "tenantId", "secretName", "keyField", "statusCode", "requestId"];
  for (const key of secretKeys) test(`${key} is a secret`, () => expect(isSecretKey(key)).toBe(true));
  for (const key of plainKeys) test(`${key} is not`, () => expect(isSecretKey(key)).toBe(false));

  test("are redacted at the top, one level down, in base and child fields; the rest is kept", () => {
    const raw: string[] = [];
    const log = createLogger("debug", { jwtSecret: "base-s3cret" }, (line) => raw.push(line));
    log.child({ token: "child-s3cret" }).warn("x", {
      authorization: "Bearer top-s3cret",
      headers: { Authorization: "Bearer nested-s3cret", accept: "*/*" },
      tokenId: "jti-1",
      password: null,
    });
    expect(raw.join("\n")).not.toContain("s3cret");
    expect(JSON.parse(raw[0] ?? "{}")).toMatchObject({
      jwtSecret: REDACTED,
      token: REDACTED,
      authorization: REDACTED,
      headers: { Authorization: REDACTED, accept: "*/*" },
      tokenId: "jti-1",
      password: null,
    });
  });

  test("the caller's fields object is left as it was", () => {
    const { log } = capture();
    const fields = { token: "abc", headers: { cookie: "c=1" } };
    log.info("x", fields);
    expect(fields).toEqual({ token: "abc", headers: { cookie: "c=1" } });
  });
});

describe("request context", () => {
  test("a line written inside a request's work carries its id, across awaits; outside, none", async () => {
    const { log, lines } = capture();
    log.info("before");
    await runInRequestContext({ requestId: "req-42" }, async () => {
      log.info("inside");
      await Bun.sleep(1);
      await Promise.resolve().then(() => log.info("after awaits"));
      runOutsideRequestContext(() => log.info("left"));
    });
    log.info("after");
    expect(lines.map((l) => [l.msg, l.requestId])).toEqual([
      ["before", undefined],
      ["inside", "req-42"],
      ["after awaits", "req-42"],
      ["left", undefined],
      ["after", undefined],
    ]);
  });

  test("concurrent requests keep their own ids", async () => {
    const seen = await Promise.all(
      ["a", "b", "c"].map((id, i) =>
        runInRequestContext({ requestId: id }, async () => {
          await Bun.sleep(3 - i);
          return currentRequestId();
        }),
      ),
    );
    expect(seen).toEqual(["a", "b", "c"]);
  });

  test("a client's id is used when sane, else replaced by a generated one", () => {
    const sane = ["abc", "0190b5e4-7c1d-7aa0-9f5e-2b1f0c6a1e11", "a.b:c/d+e=f@g_h-i", "x".repeat(128)];
    const insane = [
      "",
      "x".repeat(MAX_REQUEST_ID_LENGTH + 1),
      "with space",
      'quote"',
      "new\nline",
      "<script>",
      "semi;colon",
      "é",
    ];
    for (const id of sane) {
      expect(isSaneRequestId(id)).toBe(true);
      expect(requestIdFrom(id)).toBe(id);
    }
    for (const id of insane) {
      expect(isSaneRequestId(id)).toBe(false);
      const generated = requestIdFrom(id);
      expect(generated).not.toBe(id);
      expect(isSaneRequestId(generated)).toBe(true);
    }
    expect(requestIdFrom(null)).toMatch(/^[0-9a-f-]{36}$/);
  });
});
