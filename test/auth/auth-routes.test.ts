import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type ProvisionedTenant, TEST_JWT_SECRET, type TestApp } from "../support/app.ts";
import { forgeJwt, openToken, wrap } from "../support/tokens.ts";

let t: TestApp;
let acme: ProvisionedTenant;
let globex: ProvisionedTenant;

beforeAll(async () => {
  t = await createTestApp();
  acme = await t.provision("acme");
  globex = await t.provision("globex");
});
afterAll(() => t.close());

const unauthorized = (body: unknown) =>
  expect(body).toMatchObject({ errorType: "unauthorized", message: expect.any(String) });

describe("GET /auth/whoami", () => {
  test("answers who the Base64-wrapped token stands for", async () => {
    const { status, body } = await t.call("GET", "/auth/whoami", { token: acme.adminToken });
    expect(status).toBe(200);
    expect(body.result).toEqual({
      username: "admin",
      userId: acme.admin.id,
      tenantId: acme.tenant.id,
      roles: ["administrator", "scheduler"],
      tokenId: openToken(acme.adminToken).claims.jti as string,
      expiresAt: null,
    });
  });

  test("accepts the bare JWT too", async () => {
    const { status, body } = await t.call("GET", "/auth/whoami", { token: openToken(acme.adminToken).jwt });
    expect(status).toBe(200);
    expect(body.result.tenantId).toBe(acme.tenant.id);
  });

  const claimsOf = () => openToken(acme.adminToken).claims;
  const cases: [string, () => Record<string, string>][] = [
    ["missing header", () => ({})],
    ["a scheme other than Bearer", () => ({ authorization: `Basic ${acme.adminToken}` })],
    ["a malformed token", () => ({ authorization: "Bearer not-a-token" })],
    ["Base64 of garbage", () => ({ authorization: `Bearer ${wrap("a.b")}` })],
    [
      "alg none",
      () => ({ authorization: `Bearer ${wrap(forgeJwt({ alg: "none", typ: "JWT" }, claimsOf(), null))}` }),
    ],
    [
      "a wrong secret",
      () => ({
        authorization: `Bearer ${wrap(forgeJwt({ alg: "HS256" }, claimsOf(), `${TEST_JWT_SECRET}x`))}`,
      }),
    ],
    [
      "HS512 with the right secret",
      () => ({ authorization: `Bearer ${wrap(forgeJwt({ alg: "HS512" }, claimsOf(), TEST_JWT_SECRET))}` }),
    ],
    [
      "a tampered payload",
      () => {
        const [h, , s] = openToken(acme.adminToken).jwt.split(".");
        const payload = Buffer.from(JSON.stringify({ ...claimsOf(), tid: globex.tenant.id })).toString(
          "base64url",
        );
        return { authorization: `Bearer ${h}.${payload}.${s}` };
      },
    ],
    [
      "a well-signed token unknown to the store",
      () => ({
        authorization: `Bearer ${wrap(forgeJwt({ alg: "HS256" }, { ...claimsOf(), jti: crypto.randomUUID() }, TEST_JWT_SECRET))}`,
      }),
    ],
    [
      "a well-signed token whose expiry passed",
      () => ({
        authorization: `Bearer ${wrap(forgeJwt({ alg: "HS256" }, { ...claimsOf(), exp: Math.floor(Date.now() / 1000) - 10 }, TEST_JWT_SECRET))}`,
      }),
    ],
  ];
  for (const [name, headers] of cases) {
    test(`401 for ${name}`, async () => {
      const { status, body } = await t.call("GET", "/auth/whoami", { headers: headers() });
      expect(status).toBe(401);
      unauthorized(body);
    });
  }

  test("401 says when a token has expired", async () => {
    const exp = Math.floor(Date.now() / 1000) - 10;
    const token = wrap(forgeJwt({ alg: "HS256" }, { ...claimsOf(), exp }, TEST_JWT_SECRET));
    const { body } = await t.call("GET", "/auth/whoami", { token });
    expect(body.message).toContain("expired");
  });
});

describe("POST /auth/token", () => {
  test("mints a time-limited token that works until it expires", async () => {
    const expiry = new Date(Date.now() + 1500).toISOString();
    const minted = await t.call("POST", "/auth/token", {
      token: acme.adminToken,
      body: { expiry, roles: ["scheduler"] },
    });
    expect(minted.status).toBe(201);
    expect(minted.body.result).toEqual({
      token: expect.any(String),
      jti: expect.any(String),
      expiresAt: expiry,
    });

    const whoami = await t.call("GET", "/auth/whoami", { token: minted.body.result.token });
    expect(whoami.status).toBe(200);
    expect(whoami.body.result).toMatchObject({
      roles: ["scheduler"],
      tokenId: minted.body.result.jti,
      expiresAt: expiry,
    });

    await Bun.sleep(Date.parse(expiry) - Date.now() + 1100);
    const later = await t.call("GET", "/auth/whoami", { token: minted.body.result.token });
    expect(later.status).toBe(401);
    expect(later.body.message).toContain("expired");
  });

  test("a narrowed token cannot use administrator endpoints", async () => {
    const minted = await t.call("POST", "/auth/token", {
      token: acme.adminToken,
      body: { roles: ["scheduler"] },
    });
    const { status, body } = await t.call("GET", "/auth/tokens", { token: minted.body.result.token });
    expect(status).toBe(403);
    expect(body.errorType).toBe("insufficient_access");
  });

  test("refuses roles the user does not hold, past expiries and unknown members, listing each problem", async () => {
    const { status, body } = await t.call("POST", "/auth/token", {
      token: acme.adminToken,
      body: { roles: ["resource"], expiry: "2001-01-01T00:00:00Z" },
    });
    expect(status).toBe(400);
    expect(body.errorType).toBe("validation_failed");
    expect(body.details.map((d: { path: string }) => d.path).sort()).toEqual(["expiry", "roles"]);

    const unknown = await t.call("POST", "/auth/token", {
      token: acme.adminToken,
      body: { role: "x", expiry: "soon" },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.details.length).toBe(2);
  });

  test("answers malformed JSON with bad_request", async () => {
    const { status, body } = await t.call("POST", "/auth/token", {
      token: acme.adminToken,
      rawBody: '{"roles":',
    });
    expect(status).toBe(400);
    expect(body.errorType).toBe("bad_request");
  });
});

describe("GET /auth/tokens and DELETE /auth/token/{jti}", () => {
  test("lists the tenant's token metadata, never the token text", async () => {
    const { status, body } = await t.call("GET", "/auth/tokens", { token: acme.adminToken });
    expect(status).toBe(200);
    expect(body.result.length).toBeGreaterThan(0);
    for (const token of body.result) {
      expect(Object.keys(token).sort()).toEqual([
        "createdAt",
        "description",
        "expiresAt",
        "jti",
        "revokedAt",
        "roles",
        "userId",
      ]);
    }
    expect(JSON.stringify(body)).not.toContain(openToken(acme.adminToken).jwt.split(".")[2]);
  });

  test("a revoked token is refused on its next request", async () => {
    const minted = await t.call("POST", "/auth/token", { token: acme.adminToken, body: {} });
    const { token, jti } = minted.body.result;
    expect((await t.call("GET", "/auth/whoami", { token })).status).toBe(200);

    const revoked = await t.call("DELETE", `/auth/token/${jti}`, { token: acme.adminToken });
    expect(revoked.status).toBe(200);
    expect(revoked.body.result).toEqual({ jti, revoked: true });

    const after = await t.call("GET", "/auth/whoami", { token });
    expect(after.status).toBe(401);
    expect(after.body.message).toContain("revoked");
    const listed = (await t.call("GET", "/auth/tokens", { token: acme.adminToken })).body.result;
    expect(listed.find((x: { jti: string }) => x.jti === jti).revokedAt).toEqual(expect.any(String));
  });

  test("404 for an unknown jti", async () => {
    const { status, body } = await t.call("DELETE", `/auth/token/${crypto.randomUUID()}`, {
      token: acme.adminToken,
    });
    expect(status).toBe(404);
    expect(body.errorType).toBe("not_found");
  });
});

describe("roles and tenants", () => {
  test("403 for a non-administrator on every administrator endpoint", async () => {
    const { token } = await t.addUser(acme.tenant.id, ["scheduler", "resource"]);
    expect((await t.call("GET", "/auth/whoami", { token })).status).toBe(200);
    for (const [method, path] of [
      ["POST", "/auth/token"],
      ["GET", "/auth/tokens"],
      ["DELETE", "/auth/token/x"],
    ] as const) {
      const { status, body } = await t.call(method, path, {
        token,
        body: method === "POST" ? {} : undefined,
      });
      expect(status).toBe(403);
      expect(body.errorType).toBe("insufficient_access");
    }
  });

  test("tenant A's token never sees or revokes tenant B's tokens", async () => {
    const globexTokens = (await t.call("GET", "/auth/tokens", { token: globex.adminToken })).body.result;
    const acmeTokens = (await t.call("GET", "/auth/tokens", { token: acme.adminToken })).body.result;
    const globexIds = new Set(globexTokens.map((x: { jti: string }) => x.jti));
    expect(acmeTokens.some((x: { jti: string }) => globexIds.has(x.jti))).toBe(false);
    expect(acmeTokens.every((x: { userId: string }) => x.userId !== globex.admin.id)).toBe(true);

    const globexJti = openToken(globex.adminToken).claims.jti as string;
    const attempt = await t.call("DELETE", `/auth/token/${globexJti}`, { token: acme.adminToken });
    expect(attempt.status).toBe(404);
    expect((await t.call("GET", "/auth/whoami", { token: globex.adminToken })).status).toBe(200);
  });

  test("a token re-signed for another tenant is refused", async () => {
    const claims = { ...openToken(acme.adminToken).claims, tid: globex.tenant.id };
    const { status } = await t.call("GET", "/auth/whoami", {
      token: wrap(forgeJwt({ alg: "HS256" }, claims, TEST_JWT_SECRET)),
    });
    expect(status).toBe(401);
  });
});
