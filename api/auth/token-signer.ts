/**
 * Signs and verifies the service's JWTs with @elysiajs/jwt (jose underneath),
 * pinned to HS256: tokens naming any other algorithm, `none` included, fail.
 */
import { jwt } from "@elysiajs/jwt";
import { z } from "zod";
import { ROLES } from "../store/store.ts";

export const TokenClaimsSchema = z.object({
  sub: z.string().min(1),
  tid: z.string().min(1),
  jti: z.string().min(1),
  roles: z.array(z.enum(ROLES)),
  exp: z.number().int().optional(),
});

export type TokenClaims = z.infer<typeof TokenClaimsSchema>;

export interface TokenSigner {
  sign(claims: TokenClaims): Promise<string>;
  /** The verified claims, or null when the signature, algorithm, expiry or shape is wrong. */
  verify(token: string): Promise<TokenClaims | null>;
}

const ALGORITHM = "HS256";

export function createTokenSigner(secret: string): TokenSigner {
  const codec = jwt({ name: "jwt", secret, alg: ALGORITHM }).decorator.jwt;
  return {
    sign: ({ exp, ...claims }) => codec.sign(exp === undefined ? claims : { ...claims, exp }),
    async verify(token) {
      const payload = await codec.verify(token, { algorithms: [ALGORITHM] });
      if (!payload) return null;
      const claims = TokenClaimsSchema.safeParse(payload);
      return claims.success ? claims.data : null;
    },
  };
}

/** Reads a JWT's `exp` without verifying it, to tell "expired" apart from "invalid" in messages. */
export function peekExpiry(token: string): number | null {
  try {
    const payload = JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString("utf8"));
    return typeof payload?.exp === "number" ? payload.exp : null;
  } catch {
    return null;
  }
}
