/**
 * Standard Webhooks signatures: a webhook secret, the message id, a unix
 * timestamp and the exact body bytes in; the `webhook-signature` header value
 * out (`v1,<base64 HMAC-SHA256 of "id.timestamp.body">`). Pure (a key's HMAC is
 * keyed once and copied for each signature: the same signatures, less work).
 */

/** The prefix of a Standard Webhooks secret; the rest is the base64 of the HMAC key. */
const WEBHOOK_SECRET_PREFIX = "whsec_";

/** Thrown when a webhook secret is not `whsec_<base64>`. */
export class InvalidWebhookSecretError extends Error {
  constructor() {
    super("the webhook secret is not whsec_<base64>");
    this.name = "InvalidWebhookSecretError";
  }
}

/**
 * The HMAC key of a secret: the base64-decoded part after `whsec_` (the
 * prefix is optional, as in the reference libraries).
 * @throws InvalidWebhookSecretError when the rest is empty or not base64.
 */
export function signingKeyOf(secret: string): Buffer {
  const encoded = secret.startsWith(WEBHOOK_SECRET_PREFIX)
    ? secret.slice(WEBHOOK_SECRET_PREFIX.length)
    : secret;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) throw new InvalidWebhookSecretError();
  return Buffer.from(encoded, "base64");
}

/**
 * The `webhook-signature` value for one message.
 * @param secret `whsec_<base64 key>`
 * @param id the `webhook-id` header value (the delivery id)
 * @param timestampSeconds the `webhook-timestamp` header value
 * @param body the request body exactly as sent
 * @throws InvalidWebhookSecretError
 */
export function signPayload(secret: string, id: string, timestampSeconds: number, body: string): string {
  return signWithKey(signingKeyOf(secret), id, timestampSeconds, body);
}

// An HMAC keyed once per key (a key object is kept for its webhook definition, see signingKeysOf):
// each signature starts from a copy of it, not from the key (two SHA-256 blocks fewer per signature).
const keyed = new WeakMap<Buffer, Bun.CryptoHasher>();

/** signPayload with the secret's key already decoded (signingKeyOf): for a key used again and again. */
export function signWithKey(key: Buffer, id: string, timestampSeconds: number, body: string): string {
  // Bun's own HMAC: half the time of node:crypto's createHmac for a delivery-sized body.
  let base = keyed.get(key);
  if (base === undefined) {
    base = new Bun.CryptoHasher("sha256", key);
    keyed.set(key, base);
  }
  const mac = base.copy().update(`${id}.${timestampSeconds}.${body}`);
  return `v1,${mac.digest("base64")}`;
}
