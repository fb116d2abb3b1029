/**
 * A new user: the auth row (username, roles) and its record of the standard object `Users`
 * (UID = user id), so `CreatedBy { Email }` and `users { ... }` answer through GraphQL. The record is
 * written by the record-write engine like any other, with its change-log entry, so a webhook on
 * `schemaUsers` hears of every new user, however it was added.
 */
import { assembleCatalogue } from "../model/assemble-catalogue.ts";
import type { ObjectDef } from "../model/catalogue.ts";
import { OperationFailure } from "../records/record-operation.ts";
import { writeRecordsIn } from "../records/write-records.ts";
import type { StoreWriter, User } from "../store/store.ts";

const USER_TYPES = { administrator: "Administrator", scheduler: "Scheduler", resource: "Resource" } as const;

/**
 * Writes `user` and its Users record (created by itself, at `user.createdAt`) in the unit of work `tx`,
 * against the tenant's catalogue as `tx` sees it (its custom Users fields get their defaults).
 * @throws ValidationError when the record breaks the Users object's rules (an Email over 255 characters, ...).
 */
export async function createUser(tx: StoreWriter, user: User): Promise<void> {
  await tx.insertUser(user);
  const catalogue = assembleCatalogue(user.tenantId, await tx.loadCustomDefinitions(user.tenantId));
  const users = catalogue.objects.find((object) => object.name === "Users" && !object.custom) as ObjectDef;
  const context = {
    tenantId: user.tenantId,
    userId: user.id,
    mutationId: Bun.randomUUIDv7(),
    now: user.createdAt,
  };
  const input = {
    FirstName: user.firstName,
    LastName: user.lastName,
    Email: user.email,
    IsActive: user.isActive,
    UserTypes: user.roles.map((role) => USER_TYPES[role]),
  };
  try {
    await writeRecordsIn(tx, catalogue, context, [{ kind: "insert", object: users, uid: user.id, input }]);
  } catch (error) {
    // One operation: its error is the answer.
    throw error instanceof OperationFailure ? error.error : error;
  }
}
