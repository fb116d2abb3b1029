/**
 * The token as users hold it: the Base64 encoding of the JWT text (as the
 * original service hands them out). The bare JWT is accepted too.
 */

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/** Wraps a JWT for handing out. */
export function wrapToken(jwt: string): string {
  return Buffer.from(jwt, "utf8").toString("base64");
}

/** Recovers the JWT from a presented token (Base64-wrapped or bare); null when it is neither. */
export function unwrapToken(presented: string): string | null {
  if (JWT_SHAPE.test(presented)) return presented;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(presented)) return null;
  const decoded = Buffer.from(presented, "base64").toString("utf8");
  return JWT_SHAPE.test(decoded) ? decoded : null;
}

/** Extracts the token from an `Authorization` header value; null when absent or not a Bearer header. */
export function bearerToken(header: string | null | undefined): string | null {
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header ?? "");
  return match?.[1] ?? null;
}
