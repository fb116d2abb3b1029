/**
 * The identity part of a MongoDB session: tenants, users and token metadata
 * (layout.ts: `tenants`, `users`, `tokens`) and the store-wide revocation
 * version (a `counters` document). A thin shell: the documents, filters,
 * orders and updates are identity-documents.ts's, passed to the driver with
 * the unit of work's session on every call, reads included, so a unit's
 * reads see its own writes and everything commits or aborts together.
 */
import type { ClientSession, Db } from "mongodb";
import { uniquely } from "../../../../common/store/mongodb/driver-errors.ts";
import { COLLECTION } from "../../../../common/store/mongodb/layout.ts";
import type { IdentityReader, IdentityWriter } from "../../ports/identity-port.ts";
import {
  bumpVersion,
  EXPORT_ORDER,
  exportPageFilter,
  exportPageLimit,
  revocationVersionFilter,
  revokeUpdate,
  type StoreVersionDocument,
  TENANT_ORDER,
  type TenantDocument,
  TOKEN_ORDER,
  type TokenDocument,
  tenantByIdFilter,
  tenantByNameFilter,
  tenantDocument,
  tenantTokensFilter,
  tokenDocument,
  tokenFilter,
  toTenant,
  toToken,
  toUser,
  type UserDocument,
  userByNameFilter,
  userDocument,
  userFilter,
} from "./identity-documents.ts";

export type IdentityMembers = IdentityReader & IdentityWriter;

const mapOrNull = <D, T>(document: D | null, map: (document: D) => T): T | null =>
  document === null ? null : map(document);

/** The identity members on `db`, in the unit of work of `session` when given. */
export function createIdentitySession(db: Db, session: ClientSession | null): IdentityMembers {
  const tenants = db.collection<TenantDocument>(COLLECTION.tenants);
  const users = db.collection<UserDocument>(COLLECTION.users);
  const tokens = db.collection<TokenDocument>(COLLECTION.tokens);
  const versions = db.collection<StoreVersionDocument>(COLLECTION.counters);
  const inUnit = session ? { session } : {};

  return {
    findTenantById: async (tenantId) =>
      mapOrNull(await tenants.findOne(tenantByIdFilter(tenantId), inUnit), toTenant),
    findTenantByName: async (name) =>
      mapOrNull(await tenants.findOne(tenantByNameFilter(name), inUnit), toTenant),
    listTenants: async () => (await tenants.find({}, inUnit).sort(TENANT_ORDER).toArray()).map(toTenant),
    findUser: async (tenantId, userId) =>
      mapOrNull(await users.findOne(userFilter(tenantId, userId), inUnit), toUser),
    findUserByUsername: async (tenantId, username) =>
      mapOrNull(await users.findOne(userByNameFilter(tenantId, username), inUnit), toUser),
    findToken: async (tenantId, jti) =>
      mapOrNull(await tokens.findOne(tokenFilter(tenantId, jti), inUnit), toToken),
    listTokens: async (tenantId) =>
      (await tokens.find(tenantTokensFilter(tenantId), inUnit).sort(TOKEN_ORDER).toArray()).map(toToken),
    async exportUsers(tenantId, after, limit) {
      const count = exportPageLimit(limit);
      if (count === null) return [];
      const page = users.find(exportPageFilter(tenantId, after), inUnit).sort(EXPORT_ORDER).limit(count);
      return (await page.toArray()).map(toUser);
    },
    async exportTokens(tenantId, after, limit) {
      const count = exportPageLimit(limit);
      if (count === null) return [];
      const page = tokens.find(exportPageFilter(tenantId, after), inUnit).sort(EXPORT_ORDER).limit(count);
      return (await page.toArray()).map(toToken);
    },
    revocationVersion: async () => (await versions.findOne(revocationVersionFilter, inUnit))?.n ?? 0,

    async insertTenant(tenant) {
      await uniquely(
        () => tenants.insertOne(tenantDocument(tenant), inUnit),
        `a tenant named '${tenant.name}' exists already`,
      );
    },
    async insertUser(user) {
      await uniquely(
        () => users.insertOne(userDocument(user), inUnit),
        `the tenant has a user named '${user.username}' already`,
      );
    },
    async insertToken(token) {
      await tokens.insertOne(tokenDocument(token), inUnit);
    },
    async revokeToken(tenantId, jti, at) {
      const { matchedCount } = await tokens.updateOne(tokenFilter(tenantId, jti), revokeUpdate(at), inUnit);
      if (matchedCount === 0) return false;
      // In the same unit of work: the version moves exactly when the revocation commits.
      await versions.updateOne(revocationVersionFilter, bumpVersion, { upsert: true, ...inUnit });
      return true;
    },
  };
}
