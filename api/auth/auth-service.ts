/**
 * Authentication and token management: presented token in, principal out (and
 * whether its request rate admits it); tokens minted, listed and revoked per
 * tenant. Takes plain values, never the request context.
 *
 * Token lookups are cached per process (a map read per request, not a store
 * read). A revocation is seen by every process: the one that made it drops its
 * entry at once and, in the API, tells the others over Redis
 * (revocation-broadcast.ts), which drop theirs as the message arrives; and,
 * so that a lost message costs a bounded delay and never a revoked token kept
 * for good, every process reads the store's revocation version at least every
 * `revocationCheckMs` and drops its whole cache when it moved.
 */
import { NotFoundError, UnauthorizedError, ValidationError } from "../../common/errors.ts";
import type { Role, Store, StoreWriter, TokenRecord, User } from "../store/store.ts";
import type { Principal } from "./principal.ts";
import { noRateLimits, type RateAdmission, type RateLimiter } from "./rate-limiter.ts";
import { createTokenCache } from "./token-cache.ts";
import { peekExpiry, type TokenClaims, type TokenSigner } from "./token-signer.ts";

import { bearerToken, unwrapToken, wrapToken } from "./token-text.ts";

export interface AuthServiceDeps {
  store: Store;
  signer: TokenSigner;
  /** How long a token lookup is cached, in ms. */
  cacheTtlMs: number;
  /**
   * How often, at most, the store's revocation version is read, in ms: when it moved, every cached
   * lookup is dropped. How late a revocation made by another process may be seen here when the
   * message telling of it is lost (Redis away).
   */
  revocationCheckMs: number;
  now?: () => number;
}

export interface IssueTokenRequest {
  tenantId: string;
  userId: string;
  /** Defaults to the user's roles; must be a subset of them. */
  roles?: Role[];
  /** ms since the epoch; omitted for a long-lived token. */
  expiresAt?: number;
  description?: string;
}

export interface IssuedToken {
  /** The Base64-wrapped JWT: shown once, never stored. */
  token: string;
  record: TokenRecord;
}

type CachedLookup = { token: TokenRecord; user: User } | null;

export type AuthService = ReturnType<typeof createAuthService>;

export function createAuthService({
  store,
  signer,
  cacheTtlMs,
  revocationCheckMs,
  now = Date.now,
}: AuthServiceDeps) {
  const cache = createTokenCache<CachedLookup>(cacheTtlMs);
  // Moves with every lookup dropped: a lookup that began before a drop does not cache what it read,
  // which may be from before the revocation.
  let generation = 0;
  // The store's revocation version as last read (null: not yet), when, and the read under way.
  const revocations = {
    version: null as number | null,
    checkedAt: Number.NEGATIVE_INFINITY,
    reading: null as Promise<void> | null,
  };
  // A signature, once verified, stays valid: verifying HMAC (and importing its key) on every request
  // was the largest cost of an authenticated request. Expiry and revocation are still checked each time.
  const verified = createTokenCache<TokenClaims | null>(cacheTtlMs * 12);
  // The principal a header value came to lately, valid while its lookup is the one cached (a
  // revocation here drops that) and until the token expires: a repeat request skips the parsing.
  const principals = createTokenCache<{
    principal: Principal;
    lookupKey: string;
    found: CachedLookup;
    expiresAt: number;
  }>(cacheTtlMs);

  async function verifyCached(jwt: string): Promise<TokenClaims | null> {
    const known = verified.get(jwt, now());
    if (known !== undefined)
      return known && known.exp !== undefined && known.exp * 1000 <= now() ? null : known;

    const claims = await signer.verify(jwt);
    if (claims) verified.set(jwt, claims, now());
    return claims;
  }

  async function lookUp(tenantId: string, jti: string): Promise<CachedLookup> {
    const key = lookupKey(tenantId, jti);
    const cached = cache.get(key, now());
    if (cached !== undefined) return cached;
    const begun = generation;
    const token = await store.findToken(tenantId, jti);
    const user = token ? await store.findUser(tenantId, token.userId) : null;
    const found = token && user ? { token, user } : null;
    if (generation === begun) cache.set(key, found, now());
    return found;
  }

  const forgetToken = (tenantId: string, jti: string) => {
    generation++;
    cache.delete(lookupKey(tenantId, jti));
  };
  const forgetAllTokens = () => {
    generation++;
    cache.clear();
  };

  /** Reads the store's revocation version (one read at a time) and drops every lookup if it moved. */
  function checkRevocations(): Promise<void> {
    revocations.reading ??= (async () => {
      const at = now();
      const version = await store.revocationVersion();
      if (revocations.version !== null && version !== revocations.version) forgetAllTokens();
      revocations.version = version;
      revocations.checkedAt = at;
    })().finally(() => {
      revocations.reading = null;
    });
    return revocations.reading;
  }

  return {
    /**
     * Verifies an `Authorization` header value.
     * @throws UnauthorizedError when it is missing, malformed, badly signed, expired, revoked or unknown.
     */
    async authenticate(header: string | null | undefined): Promise<Principal> {
      if (!header)
        throw new UnauthorizedError("missing Authorization header: send 'Authorization: Bearer <token>'");
      const at = now();
      if (at - revocations.checkedAt >= revocationCheckMs) await checkRevocations();
      const seen = principals.get(header, at);
      if (seen && seen.expiresAt > at && cache.get(seen.lookupKey, at) === seen.found) return seen.principal;
      const presented = bearerToken(header);
      if (!presented)
        throw new UnauthorizedError("the Authorization header must have the form 'Bearer <token>'");
      const jwt = unwrapToken(presented);
      if (!jwt) throw new UnauthorizedError("the token is malformed");
      const claims = await verifyCached(jwt);
      if (!claims) {
        const exp = peekExpiry(jwt);
        if (exp !== null && exp * 1000 <= now()) throw new UnauthorizedError("the token has expired");
        throw new UnauthorizedError("the token is invalid");
      }
      const found = await lookUp(claims.tid, claims.jti);
      if (!found || found.token.userId !== claims.sub) throw new UnauthorizedError("the token is invalid");
      if (found.token.revokedAt !== null) throw new UnauthorizedError("the token has been revoked");
      if (found.token.expiresAt !== null && found.token.expiresAt <= now()) {
        throw new UnauthorizedError("the token has expired");
      }
      if (!found.user.isActive) throw new UnauthorizedError("the token's user is deactivated");
      const principal: Principal = Object.freeze({
        tenantId: found.token.tenantId,
        userId: found.user.id,
        username: found.user.username,
        roles: found.token.roles,
        tokenId: found.token.jti,
        expiresAt: found.token.expiresAt,
      });
      principals.set(
        header,
        {
          principal,
          lookupKey: lookupKey(claims.tid, claims.jti),
          found,
          expiresAt: Math.min(
            claims.exp === undefined ? Number.POSITIVE_INFINITY : claims.exp * 1000,
            found.token.expiresAt ?? Number.POSITIVE_INFINITY,
          ),
        },
        at,
      );
      return principal;
    },

    /**
     * Takes one request from the principal's token and tenant rate buckets.
     * @returns the admission (allowed or not, and the budget left), or null when no limit applies:
     * none does here; withRateLimits gives the API's service its limiter.
     */
    admit: (principal: Principal): Promise<RateAdmission | null> =>
      noRateLimits.admit(principal.tenantId, principal.tokenId),

    /**
     * Mints a token for a user of the tenant, inside the caller's unit of work when given.
     * @throws ValidationError for roles the user lacks or an expiry not in the future.
     */
    async issueToken(request: IssueTokenRequest, tx?: StoreWriter): Promise<IssuedToken> {
      const issue = async (writer: StoreWriter) => {
        const user = await writer.findUser(request.tenantId, request.userId);
        if (!user) throw new NotFoundError("no such user");
        const roles = request.roles ?? user.roles;
        const extra = roles.filter((role) => !user.roles.includes(role));
        const problems = extra.map((role) => ({
          path: "roles",
          message: `the user does not hold the role '${role}'`,
        }));
        if (roles.length === 0) problems.push({ path: "roles", message: "at least one role is needed" });
        if (request.expiresAt !== undefined && request.expiresAt <= now()) {
          problems.push({ path: "expiry", message: "the expiry must be in the future" });
        }
        if (problems.length > 0) throw new ValidationError("the token request is invalid", problems);
        const record: TokenRecord = {
          jti: crypto.randomUUID(),
          tenantId: request.tenantId,
          userId: user.id,
          roles: [...new Set(roles)],
          description: request.description ?? null,
          createdAt: now(),
          expiresAt: request.expiresAt ?? null,
          revokedAt: null,
        };
        await writer.insertToken(record);
        const exp = record.expiresAt === null ? undefined : Math.floor(record.expiresAt / 1000);
        const jwt = await signer.sign({
          sub: user.id,
          tid: record.tenantId,
          jti: record.jti,
          roles: record.roles,
          exp,
        });
        return { token: wrapToken(jwt), record };
      };
      return tx ? issue(tx) : store.unitOfWork(issue);
    },

    listTokens: (tenantId: string) => store.listTokens(tenantId),

    /**
     * Revokes a token of the tenant (this process refuses it at once; withRevocationNotices tells
     * the others). @throws NotFoundError when the tenant has no such token.
     */
    async revokeToken(tenantId: string, jti: string): Promise<void> {
      const revoked = await store.unitOfWork((tx) => tx.revokeToken(tenantId, jti, now()));
      if (!revoked) throw new NotFoundError(`no token with id '${jti}'`);
      forgetToken(tenantId, jti);
    },

    /** Drops this process's cached lookup of a token (another process revoked it). */
    forgetToken,
    /** Drops every cached lookup (revocations may have gone unheard). */
    forgetAllTokens,
  };
}

const lookupKey = (tenantId: string, jti: string) => `${tenantId}\u0000${jti}`;

/**
 * The same auth service (same caches) whose `admit` asks `limiter`. Core services are opened
 * without Redis (the admin tool has none); the API's app adds its limiter here.
 */
export function withRateLimits(auth: AuthService, limiter: RateLimiter): AuthService {
  return { ...auth, admit: (principal) => limiter.admit(principal.tenantId, principal.tokenId) };
}

/**
 * The same auth service (same caches) that, once a revocation has committed, hands it to `notify`
 * (the API's runtime publishes it to the other processes: revocation-broadcast.ts). `notify` is
 * not to throw: the revocation stands whatever becomes of the notice.
 */
export function withRevocationNotices(
  auth: AuthService,
  notify: (tenantId: string, jti: string) => Promise<void>,
): AuthService {
  return {
    ...auth,
    async revokeToken(tenantId, jti) {
      await auth.revokeToken(tenantId, jti);
      await notify(tenantId, jti);
    },
  };
}
