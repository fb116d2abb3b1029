/** Who is calling: what a verified token stands for. */
import { InsufficientAccessError } from "../../common/errors.ts";
import type { Role } from "../store/store.ts";

export interface Principal {
  tenantId: string;
  userId: string;
  username: string;
  roles: Role[];
  tokenId: string;
  /** ms since the epoch, or null for a long-lived token. */
  expiresAt: number | null;
}

/** @throws InsufficientAccessError when the principal lacks `role`. */
export function assertRole(principal: Principal, role: Role): void {
  if (!principal.roles.includes(role)) {
    throw new InsufficientAccessError(`this operation needs the '${role}' role`);
  }
}
