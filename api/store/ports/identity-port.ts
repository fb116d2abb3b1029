/**
 * The identity aggregate of the store port: tenants, their users and the
 * metadata of the tokens issued to them. Tenants are global; users and tokens
 * belong to one tenant and are always looked up with it.
 */

export const ROLES = ["administrator", "scheduler", "resource"] as const;
export type Role = (typeof ROLES)[number];

export interface Tenant {
  id: string;
  name: string;
  createdAt: number;
}

export interface User {
  id: string;
  tenantId: string;
  username: string;
  email: string;
  firstName: string | null;
  lastName: string;
  roles: Role[];
  isActive: boolean;
  createdAt: number;
}

/** A token's metadata. The token text itself is never stored. */
export interface TokenRecord {
  jti: string;
  tenantId: string;
  userId: string;
  roles: Role[];
  description: string | null;
  createdAt: number;
  /** ms since the epoch, or null for a long-lived token. */
  expiresAt: number | null;
  revokedAt: number | null;
}

/** Reads of tenants, users and tokens. */
export interface IdentityReader {
  /** The tenant with this id, or null. */
  findTenantById(tenantId: string): Promise<Tenant | null>;
  /** The tenant with this name, compared without regard to ASCII case; null when none. */
  findTenantByName(name: string): Promise<Tenant | null>;
  /** Every tenant, oldest first (`createdAt`, then `id`). */
  listTenants(): Promise<Tenant[]>;
  /** The tenant's user with this id, or null (a user of another tenant is not found). */
  findUser(tenantId: string, userId: string): Promise<User | null>;
  /** The tenant's user with this username, compared without regard to ASCII case; null when none. */
  findUserByUsername(tenantId: string, username: string): Promise<User | null>;
  /** The tenant's token with this id, or null (a token of another tenant is not found). */
  findToken(tenantId: string, jti: string): Promise<TokenRecord | null>;
  /** The tenant's tokens, oldest first (`createdAt`, then `jti`), revoked ones included. */
  listTokens(tenantId: string): Promise<TokenRecord[]>;
  /**
   * Copying a store: a page of the tenant's users in id order (by code point), those after the id
   * `after` (null: from the first), at most `limit`.
   */
  exportUsers(tenantId: string, after: string | null, limit: number): Promise<User[]>;
  /**
   * Copying a store: a page of the tenant's tokens in jti order (by code point), revoked ones
   * included, those after the jti `after` (null: from the first), at most `limit`.
   */
  exportTokens(tenantId: string, after: string | null, limit: number): Promise<TokenRecord[]>;
  /**
   * Grows with every revocation `revokeToken` records, of any tenant, by any process; 0 before the
   * first. Processes that cache token lookups read it now and then and drop their cache when it moved.
   */
  revocationVersion(): Promise<number>;
}

/** Writes of tenants, users and tokens (inside a unit of work). */
export interface IdentityWriter {
  /**
   * Adds a tenant.
   * @throws ConflictError when another tenant has its name (compared without regard to ASCII case).
   */
  insertTenant(tenant: Tenant): Promise<void>;
  /**
   * Adds a user to an existing tenant.
   * @throws ConflictError when another user of the tenant has its username (without regard to ASCII case).
   */
  insertUser(user: User): Promise<void>;
  /** Adds a token's metadata to an existing tenant. */
  insertToken(token: TokenRecord): Promise<void>;
  /**
   * Marks a token revoked at `at`, keeping the first revocation time when it is revoked again, and
   * moves `revocationVersion` on; false when the tenant has no such token (nothing moves).
   */
  revokeToken(tenantId: string, jti: string, at: number): Promise<boolean>;
}
