/**
 * Filters may follow references (`Region.Name`); the in-memory evaluator
 * reads those records synchronously. This fetches them first, one store
 * query per object per hop level, for every change of a batch.
 */

import type { CheckedFilter } from "../eql/checked-filter.ts";
import { filterNeeds } from "../eql/filter-needs.ts";
import type { ObjectDef } from "../model/catalogue.ts";
import type { LoggedChange, RecordValues } from "../model/record-values.ts";
import type { Store } from "../store/store.ts";

export type Lookup = (objectName: string, uid: string) => RecordValues | null;

export async function prefetchLookups(
  store: Store,
  tenantId: string,
  changes: readonly LoggedChange[],
  filters: readonly CheckedFilter[],
): Promise<Lookup> {
  const found = new Map<string, RecordValues>();
  const key = (objectName: string, uid: string) => `${objectName}\u0000${uid}`;
  const paths = filters.flatMap((filter) => filterNeeds(filter).paths);
  // Frontier: records to follow, per path, starting from the changed records' values.
  let frontier = paths.flatMap((path) =>
    changes.flatMap((change) => {
      const roots =
        path.root === "previous"
          ? [change.before]
          : path.root === "current"
            ? [change.after]
            : [change.after ?? change.before];
      return roots
        .filter((r): r is RecordValues => r !== null)
        .map((record) => ({ record, hops: path.hops }));
    }),
  );
  while (frontier.length > 0) {
    const wanted = new Map<string, { object: ObjectDef; uids: Set<string> }>();
    for (const { record, hops } of frontier) {
      const [hop] = hops;
      const uid = hop ? record[hop.reference.name] : null;
      if (!hop || typeof uid !== "string" || found.has(key(hop.target.name, uid))) continue;
      const entry = wanted.get(hop.target.name) ?? { object: hop.target, uids: new Set() };
      entry.uids.add(uid);
      wanted.set(hop.target.name, entry);
    }
    for (const { object, uids } of wanted.values()) {
      for (const record of await store.findRecords(tenantId, object, [...uids]))
        found.set(key(object.name, record.UID as string), record);
    }
    frontier = frontier.flatMap(({ record, hops }) => {
      const [hop, ...rest] = hops;
      const uid = hop ? record[hop.reference.name] : null;
      const next = hop && typeof uid === "string" ? found.get(key(hop.target.name, uid)) : undefined;
      return next && rest.length > 0 ? [{ record: next, hops: rest }] : [];
    });
  }
  return (objectName, uid) => found.get(key(objectName, uid)) ?? null;
}
