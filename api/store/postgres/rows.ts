/**
 * Row shapes of the shared tables as Bun's client reads them, and their
 * mapping to the store's records. `bigint` columns read back as strings (the
 * client's default, exact for any value); times in ms fit a number exactly.
 */
import type { Role, Tenant, TokenRecord, User } from "../ports/identity-port.ts";

/** A bigint column's value as a number (null stays null). */
const toNumber = (value: string | number | null): number | null => (value === null ? null : Number(value));

export interface TenantRow {
  id: string;
  name: string;
  created_at: string;
}

export interface UserRow {
  tenant_id: string;
  id: string;
  username: string;
  email: string;
  first_name: string | null;
  last_name: string;
  roles: Role[];
  is_active: boolean;
  created_at: string;
}

export interface TokenRow {
  tenant_id: string;
  jti: string;
  user_id: string;
  roles: Role[];
  description: string | null;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
}

export const toTenant = (row: TenantRow): Tenant => ({
  id: row.id,
  name: row.name,
  createdAt: Number(row.created_at),
});

export const toUser = (row: UserRow): User => ({
  id: row.id,
  tenantId: row.tenant_id,
  username: row.username,
  email: row.email,
  firstName: row.first_name,
  lastName: row.last_name,
  roles: row.roles,
  isActive: row.is_active,
  createdAt: Number(row.created_at),
});

export const toToken = (row: TokenRow): TokenRecord => ({
  jti: row.jti,
  tenantId: row.tenant_id,
  userId: row.user_id,
  roles: row.roles,
  description: row.description,
  createdAt: Number(row.created_at),
  expiresAt: toNumber(row.expires_at),
  revokedAt: toNumber(row.revoked_at),
});
