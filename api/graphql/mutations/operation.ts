/** The operations of one mutation request, as planned from the GraphQL selection, and their outcome. */
import type { ObjectDef } from "../../model/catalogue.ts";

export type OperationKind = "insert" | "update" | "upsert" | "delete";

export interface PlannedOperation {
  /** Response key of the `schema` root it was selected under. */
  root: string;
  /** Response key (the GraphQL alias, or the field name) under that root. */
  alias: string;
  kind: OperationKind;
  object: ObjectDef;
  /** The `input` argument, keyed by GraphQL member names (`RegionId`, ...); null for delete. */
  input: Record<string, unknown> | null;
  /** delete: the UID (or an idAlias). */
  uid?: string;
  keyField?: string;
  idAlias?: string | null;
}

/** Who runs the mutation, and when. */
export interface MutationContext {
  tenantId: string;
  userId: string;
  mutationId: string;
  /** ms since the epoch; one instant for the whole mutation. */
  now: number;
}

/** The first failing operation of a mutation: everything was rolled back. */
export class OperationFailure extends Error {
  constructor(
    readonly operation: PlannedOperation,
    readonly error: unknown,
  ) {
    super(`operation '${operation.root}.${operation.alias}' failed`);
  }
}
