/**
 * An independent Standard Webhooks verifier for tests (WebCrypto, written from
 * the specification, sharing no code with the dispatcher's signer): checks the
 * `webhook-id`, `webhook-timestamp` and `webhook-signature` headers of a
 * received request against the secret.
 */

export interface SignedMessage {
  headers: Record<string, string>;
  body: string;
}

/** Why a message does not verify; null when it does. */
export async function standardWebhooksProblem(
  secret: string,
  message: SignedMessage,
  { nowSeconds = Math.floor(Date.now() / 1000), toleranceSeconds = 300 } = {},
): Promise<string | null> {
  const id = message.headers["webhook-id"];
  const timestamp = message.headers["webhook-timestamp"];
  const signatures = message.headers["webhook-signature"];
  if (!id || !timestamp || !signatures) return "missing webhook-id, webhook-timestamp or webhook-signature";
  if (!/^\d+$/.test(timestamp)) return "webhook-timestamp is not unix seconds";
  if (Math.abs(nowSeconds - Number(timestamp)) > toleranceSeconds)
    return "webhook-timestamp outside the tolerance";
  const keyBytes = Uint8Array.from(atob(secret.replace(/^whsec_/, "")), (c) => c.charCodeAt(0));
  const key = await crypto.subtle.importKey("raw", keyBytes, { name: "HMAC", hash: "SHA-256" }, false, [
    "verify",
  ]);
  const signed = new TextEncoder().encode(`${id}.${timestamp}.${message.body}`);
  for (const entry of signatures.split(" ")) {
    const [version, encoded] = entry.split(",");
    if (version !== "v1" || !encoded) continue;
    const candidate = Uint8Array.from(atob(encoded), (c) => c.charCodeAt(0));
    if (await crypto.subtle.verify("HMAC", key, candidate, signed)) return null;
  }
  return "no v1 signature matches";
}
