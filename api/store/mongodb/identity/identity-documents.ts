/**
 * The identity aggregate's documents and queries on MongoDB, pure: a tenant,
 * user or token of the port in, the document the engine keeps out (layout.ts:
 * `tenants`, `users`, `tokens`) and back; a member's arguments in, the filter,
 * order or update it sends out. identity-session.ts hands them to the driver
 * as they are, so every decision of the aggregate is here and testable
 * without a server.
 *
 * Names are unique regardless of ASCII case as on SQLite (`COLLATE NOCASE`)
 * and PostgreSQL: each document keeps its name folded (`nameKey`,
 * `usernameKey`) beside the name as given, a unique index on the folded one,
 * and lookups by name compare folded with folded.
 */

import type { Filter, Sort, UpdateFilter } from "mongodb";
import { foldAsciiCase } from "../../../../common/store/mongodb/fold-ascii-case.ts";
import type { Role, Tenant, TokenRecord, User } from "../../ports/identity-port.ts";

/** A tenant as `tenants` keeps it. */
export interface TenantDocument {
  _id: string;
  name: string;
  /** `name` folded (foldAsciiCase): what tenant_name holds unique. */
  nameKey: string;
  createdAt: number;
}

/** A user as `users` keeps it: `_id` is the user's id, `t` its tenant's. */
export interface UserDocument {
  _id: string;
  t: string;
  username: string;
  /** `username` folded (foldAsciiCase): what user_name holds unique within the tenant. */
  usernameKey: string;
  email: string;
  firstName: string | null;
  lastName: string;
  roles: Role[];
  isActive: boolean;
  createdAt: number;
}

/** A token's metadata as `tokens` keeps it: `_id` is the jti, `t` the tenant's id. */
export interface TokenDocument {
  _id: string;
  t: string;
  userId: string;
  roles: Role[];
  description: string | null;
  createdAt: number;
  expiresAt: number | null;
  revokedAt: number | null;
}

/**
 * A store-wide version in `counters`. Its `_id` is a string, where a tenant's counters have a
 * `{t, k}` document (counter-session.ts): values of two BSON types never compare equal, so no
 * tenant or counter name can collide with it.
 */
export interface StoreVersionDocument {
  _id: string;
  n: number;
}

/** The revocation version's `_id` in `counters` (the name the other engines give its row in store_versions). */
export const REVOCATION_VERSION_ID = "token_revocations";

export const tenantDocument = (tenant: Tenant): TenantDocument => ({
  _id: tenant.id,
  name: tenant.name,
  nameKey: foldAsciiCase(tenant.name),
  createdAt: tenant.createdAt,
});

export const toTenant = (document: TenantDocument): Tenant => ({
  id: document._id,
  name: document.name,
  createdAt: document.createdAt,
});

export const userDocument = (user: User): UserDocument => ({
  _id: user.id,
  t: user.tenantId,
  username: user.username,
  usernameKey: foldAsciiCase(user.username),
  email: user.email,
  firstName: user.firstName,
  lastName: user.lastName,
  roles: [...user.roles],
  isActive: user.isActive,
  createdAt: user.createdAt,
});

export const toUser = (document: UserDocument): User => ({
  id: document._id,
  tenantId: document.t,
  username: document.username,
  email: document.email,
  firstName: document.firstName ?? null,
  lastName: document.lastName,
  roles: [...document.roles],
  isActive: document.isActive,
  createdAt: document.createdAt,
});

export const tokenDocument = (token: TokenRecord): TokenDocument => ({
  _id: token.jti,
  t: token.tenantId,
  userId: token.userId,
  roles: [...token.roles],
  description: token.description,
  createdAt: token.createdAt,
  expiresAt: token.expiresAt,
  revokedAt: token.revokedAt,
});

// A field absent from a document reads as null, as a NULL column does (the engine writes them all).
export const toToken = (document: TokenDocument): TokenRecord => ({
  jti: document._id,
  tenantId: document.t,
  userId: document.userId,
  roles: [...document.roles],
  description: document.description ?? null,
  createdAt: document.createdAt,
  expiresAt: document.expiresAt ?? null,
  revokedAt: document.revokedAt ?? null,
});

/** The tenant with this id. */
export const tenantByIdFilter = (tenantId: string): Filter<TenantDocument> => ({ _id: tenantId });

/** The tenant with this name, without regard to ASCII case (tenant_name). */
export const tenantByNameFilter = (name: string): Filter<TenantDocument> => ({
  nameKey: foldAsciiCase(name),
});

/** Every tenant, oldest first, then by id (tenant_age). */
export const TENANT_ORDER = { createdAt: 1, _id: 1 } as const satisfies Sort;

/** The tenant's user with this id: the tenant is part of the filter, so another tenant's user is not found. */
export const userFilter = (tenantId: string, userId: string): Filter<UserDocument> => ({
  _id: userId,
  t: tenantId,
});

/** The tenant's user with this username, without regard to ASCII case (user_name). */
export const userByNameFilter = (tenantId: string, username: string): Filter<UserDocument> => ({
  t: tenantId,
  usernameKey: foldAsciiCase(username),
});

/** The tenant's token with this jti (another tenant's is not found). */
export const tokenFilter = (tenantId: string, jti: string): Filter<TokenDocument> => ({
  _id: jti,
  t: tenantId,
});

/** Every token of the tenant, revoked ones included. */
export const tenantTokensFilter = (tenantId: string): Filter<TokenDocument> => ({ t: tenantId });

/** A tenant's tokens oldest first, then by jti (token_age). */
export const TOKEN_ORDER = { createdAt: 1, _id: 1 } as const satisfies Sort;

/**
 * Copying a store: the tenant's users or tokens after the id `after` (null: from the first). The
 * server compares strings by their UTF-8 bytes, which is code-point order, the port's.
 */
export const exportPageFilter = (
  tenantId: string,
  after: string | null,
): Filter<{ _id: string; t: string }> =>
  after === null ? { t: tenantId } : { t: tenantId, _id: { $gt: after } };

/** Copying a store: pages in id order (user_id_order, token_id_order). */
export const EXPORT_ORDER = { _id: 1 } as const satisfies Sort;

/**
 * The page size to ask the server for, or null when the page is empty: the server reads a limit
 * of 0 as "no limit" (and a negative one as one batch of that size), where the port asks for at
 * most `limit` rows, as SQL's LIMIT does.
 */
export function exportPageLimit(limit: number): number | null {
  const whole = Math.floor(limit);
  return whole >= 1 ? whole : null;
}

/**
 * The revocation of a token at `at`: an update pipeline that keeps the time already there (the
 * first revocation's), as the other engines' `coalesce(revoked_at, at)` does. A token matched is
 * a token revoked, whether or not this changed it: the port answers true and moves the version.
 */
export const revokeUpdate = (at: number) => [{ $set: { revokedAt: { $ifNull: ["$revokedAt", at] } } }];

/** The revocation version's document (upserted: none before the first revocation). */
export const revocationVersionFilter: Filter<StoreVersionDocument> = { _id: REVOCATION_VERSION_ID };

/** Moves a version on by one (with upsert, the first move creates it at 1). */
export const bumpVersion: UpdateFilter<StoreVersionDocument> = { $inc: { n: 1 } };
