/**
 * Hand-made JWTs for attacking the auth layer: built here with node:crypto,
 * independently of the service's signer, so tests do not trust the code under test.
 */
import { createHmac } from "node:crypto";

const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");

/** Builds a JWT with any header; `secret` null leaves the signature empty (as `alg: none` does). */
export function forgeJwt(
  header: Record<string, unknown>,
  claims: Record<string, unknown>,
  secret: string | null,
): string {
  const signingInput = `${b64url(header)}.${b64url(claims)}`;
  if (secret === null) return `${signingInput}.`;
  const hash = header.alg === "HS512" ? "sha512" : header.alg === "HS384" ? "sha384" : "sha256";
  return `${signingInput}.${createHmac(hash, secret).update(signingInput).digest("base64url")}`;
}

/** Decodes a handed-out (Base64-wrapped) token into its JWT text and claims. */
export function openToken(token: string): { jwt: string; claims: Record<string, unknown> } {
  const jwt = Buffer.from(token, "base64").toString("utf8");
  const claims = JSON.parse(Buffer.from(jwt.split(".")[1] ?? "", "base64url").toString("utf8"));
  return { jwt, claims };
}

export const wrap = (jwt: string) => Buffer.from(jwt).toString("base64");
