/**
 * The periodic re-check of the tokens this process's live connections hold: each token read
 * afresh from the store every LIVE_AUTH_RECHECK_MS; a token revoked, expired, gone, or whose user
 * is deactivated has its connections closed (4403). A re-check rather than a revocation message:
 * it also sees expiry, a user deactivated and a revocation made by the admin tool (which has no
 * Redis), on every API process, at one store read per held token per interval. A timer per
 * process is right here: each process checks its own sockets.
 */
import { describeError, type Logger } from "../../common/log.ts";
import type { Store } from "../store/store.ts";
import type { LiveHub } from "./live-hub.ts";

/** Why a token no longer holds, or null when it does. Pure. */
function tokenProblem(
  token: { revokedAt: number | null; expiresAt: number | null } | null,
  user: { isActive: boolean } | null,
  now: number,
): string | null {
  if (!token) return "the token is invalid";
  if (token.revokedAt !== null) return "the token has been revoked";
  if (token.expiresAt !== null && token.expiresAt <= now) return "the token has expired";
  if (!user?.isActive) return "the token's user is deactivated";
  return null;
}

export function startTokenRecheck(store: Store, hub: LiveHub, everyMs: number, log: Logger): () => void {
  let running = false;
  const timer = setInterval(async () => {
    if (running) return;
    running = true;
    try {
      store.refreshReads();
      for (const [{ tenantId, tokenId }, connections] of hub.tokens()) {
        const token = await store.findToken(tenantId, tokenId);
        const user = token ? await store.findUser(tenantId, token.userId) : null;
        const problem = tokenProblem(token, user, Date.now());
        if (problem) for (const connection of connections) connection.revoke(problem);
      }
    } catch (error) {
      log.warn("live connections' tokens not re-checked; retried next interval", describeError(error));
    } finally {
      running = false;
    }
  }, everyMs);
  return () => clearInterval(timer);
}
