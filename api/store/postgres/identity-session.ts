/**
 * The identity part of a PostgreSQL session: tenants (each with a schema of
 * its own for its records, made with it), users, token metadata.
 */

import { uniquely } from "../../../common/store/postgres/pg-errors.ts";
import type { Runner } from "../../../common/store/postgres/runner.ts";
import type { IdentityReader, IdentityWriter } from "../ports/identity-port.ts";
import { quoteIdent } from "../sql/quote-ident.ts";
import { type TenantRow, type TokenRow, toTenant, toToken, toUser, type UserRow } from "./rows.ts";
import { type SchemaLookup, schemaName } from "./tenant-schemas.ts";

// Columns named, never `*`: a prepared statement's result may not change shape under a later migration.
const USER = "tenant_id, id, username, email, first_name, last_name, roles, is_active, created_at";
const TOKEN = "tenant_id, jti, user_id, roles, description, created_at, expires_at, revoked_at";

const SQL = {
  tenantById: "SELECT id, name, created_at FROM tenants WHERE id = $1",
  tenantByName: "SELECT id, name, created_at FROM tenants WHERE lower(name) = lower($1)",
  tenants: "SELECT id, name, created_at FROM tenants ORDER BY created_at, id",
  user: `SELECT ${USER} FROM users WHERE tenant_id = $1 AND id = $2`,
  userByName: `SELECT ${USER} FROM users WHERE tenant_id = $1 AND lower(username) = lower($2)`,
  token: `SELECT ${TOKEN} FROM tokens WHERE tenant_id = $1 AND jti = $2`,
  tokens: `SELECT ${TOKEN} FROM tokens WHERE tenant_id = $1 ORDER BY created_at, jti`,
  userPage: `SELECT ${USER} FROM users WHERE tenant_id = $1 AND id > $2 ORDER BY id LIMIT $3`,
  tokenPage: `SELECT ${TOKEN} FROM tokens WHERE tenant_id = $1 AND jti > $2 ORDER BY jti LIMIT $3`,
  insertTenant: "INSERT INTO tenants (id, name, created_at) VALUES ($1, $2, $3) RETURNING storage_no",
  insertUser: `INSERT INTO users (${USER}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
  insertToken: `INSERT INTO tokens (${TOKEN}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
  // The revocation and the version it moves, in one statement.
  revokeToken: `WITH r AS (UPDATE tokens SET revoked_at = coalesce(revoked_at, $1) WHERE tenant_id = $2 AND jti = $3
      RETURNING 1),
    v AS (INSERT INTO store_versions (name, version) SELECT 'token_revocations', 1 FROM r
      ON CONFLICT (name) DO UPDATE SET version = store_versions.version + 1)
    SELECT count(*)::int AS revoked FROM r`,
  revocationVersion: "SELECT version FROM store_versions WHERE name = 'token_revocations'",
};

const first = async <R, T>(rows: Promise<R[]>, map: (row: R) => T): Promise<T | null> => {
  const [row] = await rows;
  return row === undefined ? null : map(row);
};

export function createIdentitySession(db: Runner, schemas: SchemaLookup): IdentityReader & IdentityWriter {
  return {
    findTenantById: (tenantId) => first(db.rows<TenantRow>(SQL.tenantById, [tenantId]), toTenant),
    findTenantByName: (name) => first(db.rows<TenantRow>(SQL.tenantByName, [name]), toTenant),
    listTenants: async () => (await db.rows<TenantRow>(SQL.tenants)).map(toTenant),
    findUser: (tenantId, userId) => first(db.rows<UserRow>(SQL.user, [tenantId, userId]), toUser),
    findUserByUsername: (tenantId, username) =>
      first(db.rows<UserRow>(SQL.userByName, [tenantId, username]), toUser),
    findToken: (tenantId, jti) => first(db.rows<TokenRow>(SQL.token, [tenantId, jti]), toToken),
    listTokens: async (tenantId) => (await db.rows<TokenRow>(SQL.tokens, [tenantId])).map(toToken),
    exportUsers: async (tenantId, after, limit) =>
      (await db.rows<UserRow>(SQL.userPage, [tenantId, after ?? "", limit])).map(toUser),
    exportTokens: async (tenantId, after, limit) =>
      (await db.rows<TokenRow>(SQL.tokenPage, [tenantId, after ?? "", limit])).map(toToken),

    async insertTenant(tenant) {
      const [row] = await uniquely(`a tenant named '${tenant.name}' exists already`, () =>
        db.rows<{ storage_no: string }>(SQL.insertTenant, [tenant.id, tenant.name, tenant.createdAt]),
      );
      const storageNo = Number(row?.storage_no);
      // In the unit of work: a tenant that rolls back leaves no schema.
      await db.run(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schemaName(storageNo))}`);
      schemas.remember(tenant.id, storageNo);
    },
    async insertUser(user) {
      await uniquely(`the tenant has a user named '${user.username}' already`, () =>
        db.run(SQL.insertUser, [
          user.tenantId,
          user.id,
          user.username,
          user.email,
          user.firstName,
          user.lastName,
          user.roles,
          user.isActive,
          user.createdAt,
        ]),
      );
    },
    async insertToken(token) {
      await db.run(SQL.insertToken, [
        token.tenantId,
        token.jti,
        token.userId,
        token.roles,
        token.description,
        token.createdAt,
        token.expiresAt,
        token.revokedAt,
      ]);
    },
    revokeToken: async (tenantId, jti, at) =>
      ((await db.rows<{ revoked: number }>(SQL.revokeToken, [at, tenantId, jti]))[0]?.revoked ?? 0) > 0,
    revocationVersion: async () =>
      Number((await db.rows<{ version: string }>(SQL.revocationVersion))[0]?.version ?? 0),
  };
}
