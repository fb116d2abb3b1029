/**
 * The named Elysia plugin that authenticates requests. Routes opt in with the
 * `auth` macro: `{ auth: true }` for any valid token, `{ auth: "administrator" }`
 * for a role. The verified principal is then in the context as `principal`.
 */
import { Elysia } from "elysia";
import type { Role } from "../store/store.ts";
import type { AuthService } from "./auth-service.ts";
import { assertRole } from "./principal.ts";

export function authPlugin(auth: AuthService) {
  return new Elysia({ name: "auth" }).macro({
    auth: (required: Role | true) => ({
      async resolve({ request }) {
        const principal = await auth.authenticate(request.headers.get("authorization"));
        if (required !== true) assertRole(principal, required);
        return { principal };
      },
    }),
  });
}
