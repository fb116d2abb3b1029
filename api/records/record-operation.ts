/**
 * What the record-write engine takes and how it fails: operations on records, whoever planned them
 * (the GraphQL mutation resolver from its selection, the user provisioning for a user's record), and
 * the context of the unit of work they run in together.
 */
import type { ObjectDef } from "../model/catalogue.ts";

export type OperationKind = "insert" | "update" | "upsert" | "delete";

/** One write to one record of `object`. */
export interface RecordOperation {
  kind: OperationKind;
  object: ObjectDef;
  /**
   * The values to write, keyed by member names (`RegionId`, ..., see api/model/member-name.ts); a
   * reference's value is a UID or an idAlias defined earlier in the same write. update: with the
   * record's `UID` (or idAlias). null for delete. Read-only, system and unknown members are refused.
   */
  input: Record<string, unknown> | null;
  /**
   * delete: the UID (or an idAlias). insert: the UID the new record gets, when the caller owns it
   * (a user's record has the user's id); a new UUIDv7 when absent. Unused by update and upsert.
   */
  uid?: string;
  /** upsert: the unique field whose value finds the record to update. */
  keyField?: string;
  /** insert and upsert: a name later operations of the same write may use for the record's UID. */
  idAlias?: string | null;
}

/** Who writes, and when: one instant and one mutation id for every operation of the write. */
export interface WriteContext {
  tenantId: string;
  /** The acting user: CreatedBy and LastModifiedBy of what it writes. */
  userId: string;
  /** Shared by the write's change-log entries (their `mutationId`). */
  mutationId: string;
  /** ms since the epoch. */
  now: number;
  /** The request that asked for the write (common/request-context.ts), kept in its change-log entries. */
  requestId?: string;
}

/** The first failing operation of a write (its position and its error): everything was rolled back. */
export class OperationFailure extends Error {
  constructor(
    readonly index: number,
    readonly error: unknown,
  ) {
    super(`operation ${index} failed`);
  }
}
