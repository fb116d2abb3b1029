/** Row shapes of the SQLite tables and their mapping to the store's records. */
import type { Role, Tenant, TokenRecord, User } from "../ports/identity-port.ts";

export interface TenantRow {
  id: string;
  name: string;
  created_at: number;
}

export interface UserRow {
  tenant_id: string;
  id: string;
  username: string;
  email: string;
  first_name: string | null;
  last_name: string;
  roles: string;
  is_active: number;
  created_at: number;
}

export interface TokenRow {
  tenant_id: string;
  jti: string;
  user_id: string;
  roles: string;
  description: string | null;
  created_at: number;
  expires_at: number | null;
  revoked_at: number | null;
}

export const toTenant = (row: TenantRow): Tenant => ({
  id: row.id,
  name: row.name,
  createdAt: row.created_at,
});

export const toUser = (row: UserRow): User => ({
  id: row.id,
  tenantId: row.tenant_id,
  username: row.username,
  email: row.email,
  firstName: row.first_name,
  lastName: row.last_name,
  roles: JSON.parse(row.roles) as Role[],
  isActive: row.is_active === 1,
  createdAt: row.created_at,
});

export const toToken = (row: TokenRow): TokenRecord => ({
  jti: row.jti,
  tenantId: row.tenant_id,
  userId: row.user_id,
  roles: JSON.parse(row.roles) as Role[],
  description: row.description,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
  revokedAt: row.revoked_at,
});
