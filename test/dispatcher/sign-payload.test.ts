import { describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import {
  InvalidWebhookSecretError,
  signingKeyOf,
  signPayload,
  signWithKey,
} from "../../dispatcher/sign-payload.ts";
import { standardWebhooksProblem } from "../support/standard-webhooks.ts";

// The test vector published with the Standard Webhooks reference libraries (and Svix's).
const VECTOR = {
  secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
  id: "msg_p5jXN8AQM9LWM0D4loKWxJek",
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
};

describe("signPayload", () => {
  test("reproduces the Standard Webhooks reference vector", () => {
    expect(signPayload(VECTOR.secret, VECTOR.id, VECTOR.timestamp, VECTOR.body)).toBe(VECTOR.signature);
  });

  test("the whsec_ prefix is optional, as in the reference libraries", () => {
    const bare = VECTOR.secret.slice("whsec_".length);
    expect(signPayload(bare, VECTOR.id, VECTOR.timestamp, VECTOR.body)).toBe(VECTOR.signature);
  });

  test("an independent WebCrypto verifier accepts what it signs and rejects any change", async () => {
    const secret = `whsec_${Buffer.from(crypto.getRandomValues(new Uint8Array(24))).toString("base64")}`;
    const body = JSON.stringify([{ data: { schemaJobs: { operation: "INSERT", name: "ünïcode ✓" } } }]);
    const headers = {
      "webhook-id": "d-1",
      "webhook-timestamp": "1700000000",
      "webhook-signature": signPayload(secret, "d-1", 1700000000, body),
    };
    const at = { nowSeconds: 1700000000 };
    expect(await standardWebhooksProblem(secret, { headers, body }, at)).toBeNull();
    expect(await standardWebhooksProblem(secret, { headers, body: `${body} ` }, at)).toBe(
      "no v1 signature matches",
    );
    const otherId = { ...headers, "webhook-id": "d-2" };
    expect(await standardWebhooksProblem(secret, { headers: otherId, body }, at)).toBe(
      "no v1 signature matches",
    );
  });

  test("one key signing message after message signs each as a fresh key would (its HMAC is keyed once)", () => {
    const key = signingKeyOf(VECTOR.secret);
    expect(signWithKey(key, VECTOR.id, VECTOR.timestamp, VECTOR.body)).toBe(VECTOR.signature);
    for (let i = 0; i < 3; i++) {
      const body = `[{"n":${i}}]`;
      const expected = createHmac("sha256", key)
        .update(`d-${i}.${1700000000 + i}.${body}`)
        .digest("base64");
      expect(signWithKey(key, `d-${i}`, 1700000000 + i, body)).toBe(`v1,${expected}`);
    }
    expect(signWithKey(key, VECTOR.id, VECTOR.timestamp, VECTOR.body)).toBe(VECTOR.signature);
  });

  test.each(["whsec_", "whsec_not base64!", ""])("refuses the malformed secret %p", (secret) => {
    expect(() => signingKeyOf(secret)).toThrow(InvalidWebhookSecretError);
  });
});
