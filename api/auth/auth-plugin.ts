/**
 * The named Elysia plugin that authenticates requests. Routes opt in with the
 * `auth` macro: `{ auth: true }` for any valid token, `{ auth: "administrator" }`
 * for a role. The verified principal is then in the context as `principal`.
 * Every authenticated request is also counted against its token's and tenant's
 * rate limits: its answer carries the budget left, and one over the limit is
 * refused (429) before the role is checked or the route runs.
 */
import { Elysia } from "elysia";
import type { Role } from "../store/store.ts";
import type { AuthService } from "./auth-service.ts";
import { assertRole } from "./principal.ts";
import { rateLimitHeaders } from "./rate-limit-headers.ts";
import { assertAdmitted } from "./rate-limiter.ts";

export function authPlugin(auth: AuthService) {
  return new Elysia({ name: "auth" }).macro({
    auth: (required: Role | true) => ({
      async resolve({ request, set }) {
        const principal = await auth.authenticate(request.headers.get("authorization"));
        const admission = await auth.admit(principal);
        Object.assign(set.headers, rateLimitHeaders(admission));
        assertAdmitted(admission);
        if (required !== true) assertRole(principal, required);
        return { principal };
      },
    }),
  });
}
