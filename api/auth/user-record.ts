/**
 * Every user is also a record of the standard object `Users` (UID = user id),
 * so `CreatedBy { Email }` and `users { ... }` answer through GraphQL.
 */
import type { ObjectDef } from "../model/catalogue.ts";
import { STANDARD_OBJECTS } from "../model/standard-objects.ts";
import type { StoreWriter, User } from "../store/store.ts";

const USERS = STANDARD_OBJECTS.find((object) => object.name === "Users") as ObjectDef;
const USER_TYPES = { administrator: "Administrator", scheduler: "Scheduler", resource: "Resource" } as const;

/** Writes the Users record of `user` (created by itself). */
export async function insertUserRecord(tx: StoreWriter, user: User): Promise<void> {
  await tx.insertRecord(user.tenantId, USERS, {
    UID: user.id,
    CreatedDate: user.createdAt,
    LastModifiedDate: user.createdAt,
    CreatedBy: user.id,
    LastModifiedBy: user.id,
    FirstName: user.firstName,
    LastName: user.lastName,
    Email: user.email,
    IsActive: user.isActive,
    UserTypes: user.roles.map((role) => USER_TYPES[role]),
  });
}
