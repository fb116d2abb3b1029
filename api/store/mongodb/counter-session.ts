/**
 * The counters a tenant keeps (layout.ts, counters): its catalogue version
 * and its named sequences, each one document incremented in the unit of work.
 * Two units incrementing one counter write one document, so the second meets
 * a write conflict and runs again: values of committed units are never
 * handed out twice and grow in commit order, and two catalogue changes never
 * both pass their checks (write-skew.ts).
 */
import type { ClientSession, Db } from "mongodb";
import { COLLECTION } from "../../../common/store/mongodb/layout.ts";
import type { CatalogueReader, CatalogueWriter } from "../ports/catalogue-port.ts";
import type { RecordWriter } from "../ports/records-port.ts";
import { sequenceCounterId } from "./records/sequence-counters.ts";
import { catalogueCounterRef } from "./write-skew.ts";

interface Counter {
  _id: { t: string; k: string };
  n: number;
}

export type CounterMembers = Pick<CatalogueReader, "catalogueVersion"> &
  Pick<CatalogueWriter, "bumpCatalogueVersion"> &
  Pick<RecordWriter, "nextSequenceValue">;

/** The counters' members on `db`, in the unit of work of `session` when given. */
export function createCounterSession(db: Db, session: ClientSession | null): CounterMembers {
  const counters = db.collection<Counter>(COLLECTION.counters);
  const inUnit = session ? { session } : {};
  const increment = async (id: Counter["_id"]) => {
    const after = await counters.findOneAndUpdate(
      { _id: id },
      { $inc: { n: 1 } },
      { upsert: true, returnDocument: "after", ...inUnit },
    );
    return after?.n ?? 1;
  };
  const catalogueId = (tenantId: string) => catalogueCounterRef(tenantId).filter._id as Counter["_id"];
  return {
    async catalogueVersion(tenantId) {
      return (await counters.findOne({ _id: catalogueId(tenantId) }, inUnit))?.n ?? 0;
    },
    bumpCatalogueVersion: (tenantId) => increment(catalogueId(tenantId)),
    nextSequenceValue: (tenantId, name) => increment(sequenceCounterId(tenantId, name)),
  };
}
