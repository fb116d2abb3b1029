/**
 * A change subscription once parsed: the object it watches, the operations,
 * the checked filters and the members each change event shows.
 * parse-subscription.ts produces it, match-changes.ts reads it; webhooks use
 * both today, live subscriptions are to share them.
 */
import type { CheckedFilter } from "../eql/checked-filter.ts";
import type { ObjectDef } from "../model/catalogue.ts";
import type { ChangeOperation } from "../model/record-values.ts";

/** One selected member of the change event, by response key. */
export type Member =
  | { key: string; kind: "operation" | "timestamp" }
  | { key: string; kind: "data" | "previous"; fields: { key: string; field: string }[] };

export interface Subscription {
  object: ObjectDef;
  /** The response key of the root field (`schemaJobs`, or its alias). */
  rootKey: string;
  /** null: every operation. */
  operations: ReadonlySet<ChangeOperation> | null;
  filter: CheckedFilter | null;
  extendedFilter: CheckedFilter | null;
  members: Member[];
  /** Record fields selected under `data`: a change of one of them fires an UPDATE. */
  watched: string[];
}
