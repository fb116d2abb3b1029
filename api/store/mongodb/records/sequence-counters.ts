/**
 * A tenant's named sequences in `counters` (layout.ts): one document each, `_id: {t: tenant id,
 * k: "seq:" + name}`, `n` the last value handed out. Its id, and the range of ids holding all of a
 * tenant's sequences, read along the `_id` index in name order.
 */
import type { Document } from "mongodb";
import type { SequenceValue } from "../../ports/records-port.ts";

/** What precedes a sequence's name in its counter's `k`. */
const SEQUENCE_PREFIX = "seq:";
/** The first string after every string starting with the prefix: `:` is followed by `;` in code-point order. */
const AFTER_SEQUENCES = "seq;";

/** A sequence counter's `_id`. Its fields in this order: the server compares embedded documents field by field. */
export const sequenceCounterId = (tenantId: string, name: string) => ({
  t: tenantId,
  k: `${SEQUENCE_PREFIX}${name}`,
});

/**
 * Every sequence counter of the tenant. The `_id` range is what the server reads: it orders
 * embedded documents field by field (names, then values), so the `{t, k}` ids of one tenant with
 * `k` from "seq:" up to "seq;" are one stretch of the `_id` index, exactly its sequences (a query
 * on `_id.t` alone could use no index and would read every tenant's counters). The same bounds on
 * `_id.t` and `_id.k` make the match exact under any order of embedded documents (and cost
 * nothing once the index has bounded the read).
 */
export function tenantSequencesQuery(tenantId: string): Document {
  return {
    _id: { $gte: { t: tenantId, k: SEQUENCE_PREFIX }, $lt: { t: tenantId, k: AFTER_SEQUENCES } },

    "_id.t": tenantId,
    "_id.k": { $gte: SEQUENCE_PREFIX, $lt: AFTER_SEQUENCES },
  };
}

/** The `_id` order: the tenant's sequences by name, in code-point order. */
export const SEQUENCE_ORDER = { _id: 1 } as const;

/** A sequence counter document → the sequence's name and the last value it handed out. */
export function sequenceValueOf(document: Document): SequenceValue {
  const id = document._id as { k: string };
  return { name: id.k.slice(SEQUENCE_PREFIX.length), value: Number(document.n) };
}
