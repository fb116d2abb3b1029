/**
 * A revocation whose message never arrives: two apps on one store, each on a Redis prefix of its
 * own, so nothing A publishes reaches B. B, which has just accepted the token, refuses it within
 * TOKEN_REVOCATION_CHECK_MS (the store's revocation version read), not after TOKEN_CACHE_TTL_MS.
 * (test/flows/propagation.test.ts: with the message, B refuses its very next request.)
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createTestApp, type ProvisionedTenant, type TestApp } from "../support/app.ts";

const CHECK_MS = 200;
let a: TestApp;
let b: TestApp;
let acme: ProvisionedTenant;

beforeAll(async () => {
  const settings = { TOKEN_REVOCATION_CHECK_MS: String(CHECK_MS), TOKEN_CACHE_TTL_MS: "60000" };
  a = await createTestApp(settings);
  b = await createTestApp({ ...a.storeEnv, ...settings });
  acme = await a.provision("acme");
});
afterAll(async () => {
  await b.close();
  await a.close();
});

test("without the message, another process refuses a revoked token within TOKEN_REVOCATION_CHECK_MS", async () => {
  const minted = await a.call("POST", "/auth/token", { token: acme.adminToken, body: {} });
  const { token, jti } = minted.body.result as { token: string; jti: string };
  expect((await b.call("GET", "/auth/whoami", { token })).status).toBe(200);
  expect((await a.call("DELETE", `/auth/token/${jti}`, { token: acme.adminToken })).status).toBe(200);
  const revokedAt = performance.now();
  // Asked every 10 ms until it refuses, at most 6 s: before, it accepted for the cache's whole minute.
  let status = 200;
  while (status === 200 && performance.now() - revokedAt < 6000) {
    status = (await b.call("GET", "/auth/whoami", { token })).status;
    if (status === 200) await Bun.sleep(10);
  }
  const took = performance.now() - revokedAt;
  expect(status).toBe(401);
  // The bound plus a generous margin for a busy machine.
  expect(took).toBeLessThan(CHECK_MS + 800);
});
