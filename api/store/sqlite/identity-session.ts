/** The identity part of a SQLite session: tenants (and their storage numbers), users, token metadata. */
import type { Database } from "bun:sqlite";
import { BOUND_COUNT } from "../../../common/store/sqlite/bound-count.ts";
import type { IdentityReader, IdentityWriter, Tenant, TokenRecord, User } from "../ports/identity-port.ts";
import { uniquely } from "./constraint-errors.ts";
import { type TenantRow, type TokenRow, toTenant, toToken, toUser, type UserRow } from "./rows.ts";

export interface IdentitySession extends IdentityReader, IdentityWriter {
  /** The tenant's storage number (its tables' prefix); never changes once given. Throws for an unknown tenant. */
  storageNo(tenantId: string): number;
}

export function createIdentitySession(db: Database): IdentitySession {
  const q = {
    tenantById: db.query<TenantRow, [string]>("SELECT * FROM tenants WHERE id = ?"),
    tenantByName: db.query<TenantRow, [string]>("SELECT * FROM tenants WHERE name = ?"),
    tenants: db.query<TenantRow, []>("SELECT * FROM tenants ORDER BY created_at, id"),
    user: db.query<UserRow, [string, string]>("SELECT * FROM users WHERE tenant_id = ? AND id = ?"),
    userByName: db.query<UserRow, [string, string]>(
      "SELECT * FROM users WHERE tenant_id = ? AND username = ?",
    ),
    token: db.query<TokenRow, [string, string]>("SELECT * FROM tokens WHERE tenant_id = ? AND jti = ?"),
    tokens: db.query<TokenRow, [string]>("SELECT * FROM tokens WHERE tenant_id = ? ORDER BY created_at, jti"),
    userPage: db.query<UserRow, [string, string, number]>(
      `SELECT * FROM users WHERE tenant_id = ? AND id > ? ORDER BY id LIMIT ${BOUND_COUNT}`,
    ),
    tokenPage: db.query<TokenRow, [string, string, number]>(
      `SELECT * FROM tokens WHERE tenant_id = ? AND jti > ? ORDER BY jti LIMIT ${BOUND_COUNT}`,
    ),
    insertTenant: db.query(
      `INSERT INTO tenants (id, name, created_at, storage_no)
       VALUES (?, ?, ?, (SELECT coalesce(max(storage_no), 0) + 1 FROM tenants))`,
    ),
    storageNo: db.query<{ storage_no: number }, [string]>("SELECT storage_no FROM tenants WHERE id = ?"),
    insertUser: db.query(
      `INSERT INTO users (tenant_id, id, username, email, first_name, last_name, roles, is_active, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    insertToken: db.query(
      `INSERT INTO tokens (tenant_id, jti, user_id, roles, description, created_at, expires_at, revoked_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    revokeToken: db.query(
      "UPDATE tokens SET revoked_at = coalesce(revoked_at, ?) WHERE tenant_id = ? AND jti = ?",
    ),
    revocationVersion: db.query<{ version: number }, []>(
      "SELECT version FROM store_versions WHERE name = 'token_revocations'",
    ),
    bumpRevocations: db.query(
      `INSERT INTO store_versions (name, version) VALUES ('token_revocations', 1)
       ON CONFLICT (name) DO UPDATE SET version = version + 1`,
    ),
  };

  // A tenant's storage number never changes once given.
  const storageNos = new Map<string, number>();
  const storageNo = (tenantId: string): number => {
    let no = storageNos.get(tenantId);
    if (no === undefined) {
      no = q.storageNo.get(tenantId)?.storage_no;
      if (no === undefined) throw new Error(`no tenant ${tenantId}`);
      storageNos.set(tenantId, no);
    }
    return no;
  };

  return {
    storageNo,
    findTenantById: async (tenantId) => mapOrNull(q.tenantById.get(tenantId), toTenant),
    findTenantByName: async (name) => mapOrNull(q.tenantByName.get(name), toTenant),
    listTenants: async () => q.tenants.all().map(toTenant),
    findUser: async (tenantId, userId) => mapOrNull(q.user.get(tenantId, userId), toUser),
    findUserByUsername: async (tenantId, username) => mapOrNull(q.userByName.get(tenantId, username), toUser),
    findToken: async (tenantId, jti) => mapOrNull(q.token.get(tenantId, jti), toToken),
    listTokens: async (tenantId) => q.tokens.all(tenantId).map(toToken),
    exportUsers: async (tenantId, after, limit) => q.userPage.all(tenantId, after ?? "", limit).map(toUser),
    exportTokens: async (tenantId, after, limit) =>
      q.tokenPage.all(tenantId, after ?? "", limit).map(toToken),

    insertTenant: async (tenant: Tenant) => {
      uniquely(`a tenant named '${tenant.name}' exists already`, () =>
        q.insertTenant.run(tenant.id, tenant.name, tenant.createdAt),
      );
    },
    insertUser: async (user: User) => {
      uniquely(`the tenant has a user named '${user.username}' already`, () =>
        q.insertUser.run(
          user.tenantId,
          user.id,
          user.username,
          user.email,
          user.firstName,
          user.lastName,
          JSON.stringify(user.roles),
          user.isActive ? 1 : 0,
          user.createdAt,
        ),
      );
    },
    insertToken: async (token: TokenRecord) => {
      q.insertToken.run(
        token.tenantId,
        token.jti,
        token.userId,
        JSON.stringify(token.roles),
        token.description,
        token.createdAt,
        token.expiresAt,
        token.revokedAt,
      );
    },
    revokeToken: async (tenantId, jti, at) => {
      const revoked = q.revokeToken.run(at, tenantId, jti).changes > 0;
      if (revoked) q.bumpRevocations.run();
      return revoked;
    },
    revocationVersion: async () => q.revocationVersion.get()?.version ?? 0,
  };
}

function mapOrNull<R, T>(row: R | null, map: (row: R) => T): T | null {
  return row === null ? null : map(row);
}
