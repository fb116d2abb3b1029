/** `/auth/*`: who am I, and token management for administrators (SPEC.md §1). */
import { Elysia } from "elysia";
import { z } from "zod";
import { parseBody } from "../http/parse-body.ts";
import { routeDoc } from "../http/route-doc.ts";
import { ROLES, type TokenRecord } from "../store/store.ts";
import { authPlugin } from "./auth-plugin.ts";
import type { AuthService } from "./auth-service.ts";

const TokenRequestSchema = z.strictObject({
  expiry: z.iso.datetime({ offset: true }).optional(),
  roles: z.array(z.enum(ROLES)).min(1).max(ROLES.length).optional(),
  description: z.string().max(255).optional(),
});

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

const tokenView = (token: TokenRecord) => ({
  jti: token.jti,
  userId: token.userId,
  roles: token.roles,
  description: token.description,
  createdAt: iso(token.createdAt),
  expiresAt: iso(token.expiresAt),
  revokedAt: iso(token.revokedAt),
});

export function authRoutes(auth: AuthService) {
  return new Elysia({ name: "auth-routes", prefix: "/auth" })
    .use(authPlugin(auth))
    .get(
      "/whoami",
      ({ principal }) => ({
        result: {
          username: principal.username,
          userId: principal.userId,
          tenantId: principal.tenantId,
          roles: principal.roles,
          tokenId: principal.tokenId,
          expiresAt: iso(principal.expiresAt),
        },
      }),
      { auth: true, detail: routeDoc({ summary: "Who the token belongs to", tags: ["auth"] }) },
    )
    .post(
      "/token",
      async ({ principal, body, set }) => {
        const request = parseBody(TokenRequestSchema, body);
        const issued = await auth.issueToken({
          tenantId: principal.tenantId,
          userId: principal.userId,
          roles: request.roles,
          expiresAt: request.expiry === undefined ? undefined : Date.parse(request.expiry),
          description: request.description,
        });
        set.status = 201;
        return {
          result: { token: issued.token, jti: issued.record.jti, expiresAt: iso(issued.record.expiresAt) },
        };
      },
      {
        auth: "administrator",
        detail: routeDoc({ summary: "Mint a token", tags: ["auth"], body: TokenRequestSchema, status: 201 }),
      },
    )
    .get(
      "/tokens",
      async ({ principal }) => ({ result: (await auth.listTokens(principal.tenantId)).map(tokenView) }),
      { auth: "administrator", detail: routeDoc({ summary: "List the tenant's tokens", tags: ["auth"] }) },
    )
    .delete(
      "/token/:jti",
      async ({ principal, params }) => {
        await auth.revokeToken(principal.tenantId, params.jti);
        return { result: { jti: params.jti, revoked: true } };
      },
      { auth: "administrator", detail: routeDoc({ summary: "Revoke a token", tags: ["auth"] }) },
    );
}
