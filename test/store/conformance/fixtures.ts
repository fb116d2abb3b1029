/** Values the conformance suite writes: tenants, users, tokens, change-log entries. */
import type { ChangeEntry } from "../../../api/model/record-values.ts";
import type { Tenant, TokenRecord, User } from "../../../api/store/store.ts";

export const tenant = (name: string): Tenant => ({ id: crypto.randomUUID(), name, createdAt: Date.now() });

export const user = (tenantId: string, username: string): User => ({
  id: crypto.randomUUID(),
  tenantId,
  username,
  email: `${username}@example.invalid`,
  firstName: "Ada",
  lastName: "Lovelace",
  roles: ["scheduler"],
  isActive: true,
  createdAt: Date.now(),
});

export const token = (tenantId: string, userId: string): TokenRecord => ({
  jti: crypto.randomUUID(),
  tenantId,
  userId,
  roles: ["scheduler"],
  description: null,
  createdAt: Date.now(),
  expiresAt: null,
  revokedAt: null,
});

/** A change-log entry of `tenantId`'s mutation `mutationId`. */
export const changeEntry = (
  tenantId: string,
  mutationId: string,
  sequence: number,
  committedAt = Date.now(),
): ChangeEntry => ({
  tenantId,
  objectName: "Things",
  operation: "INSERT",
  uid: crypto.randomUUID(),
  before: null,
  after: { Name: `${mutationId}/${sequence}` },
  mutationId,
  sequence,
  committedAt,
});
