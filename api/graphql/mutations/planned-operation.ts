/** A mutation request's operations, as planned from the GraphQL selection: record operations with where they answer. */
import type { RecordOperation } from "../../records/record-operation.ts";

export interface PlannedOperation extends RecordOperation {
  /** Response key of the `schema` root it was selected under. */
  root: string;
  /** Response key (the GraphQL alias, or the field name) under that root. */
  alias: string;
}
