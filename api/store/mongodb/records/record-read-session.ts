/**
 * The record reads of a MongoDB session (RecordReader but `readJson`, which is optional: the
 * service then answers through these): the query documents and pipelines built by the pure parts
 * (record-read-queries.ts, query/list-pipeline.ts, sequence-counters.ts) passed to the driver on the
 * collection holding the object's records, in the unit of work's transaction when there is one (its
 * snapshot, so a check and the write it allows read the same data), every one under MQL_COLLATION
 * (strings compared by code point, whatever a collection's default), and the documents read back
 * decoded by decode-record.ts.
 */
import type { ClientSession, Db, Document } from "mongodb";
import { COLLECTION } from "../../../../common/store/mongodb/layout.ts";
import type { ObjectDef } from "../../../model/catalogue.ts";
import type { RecordReader } from "../../ports/records-port.ts";
import { countPipeline, listPipeline, relatedPipeline } from "../query/list-pipeline.ts";
import { MQL_COLLATION } from "../query/mql-layout.ts";
import { decodeListed, decodeRecord, listedRecordOf } from "./decode-record.ts";
import { recordCollectionOf, recordLayout } from "./record-layout.ts";
import { byUidsQuery, byValueQuery, fieldsProjection, referencingQuery } from "./record-read-queries.ts";
import { SEQUENCE_ORDER, sequenceValueOf, tenantSequencesQuery } from "./sequence-counters.ts";

export type RecordReadMembers = Omit<RecordReader, "readJson">;

/** The record reads on `db`, in the unit of work of `session` when given. */
export function createRecordReadSession(db: Db, session: ClientSession | null): RecordReadMembers {
  const options = { ...(session ? { session } : {}), collation: MQL_COLLATION };
  const records = (object: ObjectDef) => db.collection(recordCollectionOf(object));
  // Driver errors go up as they are: inside a unit of work withTransaction runs the work again on a
  // transient one and the unit maps what is left; outside, the store maps them (mongodb-store.ts).

  return {
    async findRecords(tenantId, object, uids, fields = object.fields) {
      if (uids.length === 0) return [];
      const layout = recordLayout(tenantId);
      const documents = await records(object)
        .find(byUidsQuery(layout, object, uids), {
          ...options,
          projection: fieldsProjection(layout, fields),
        })
        .toArray();
      return documents.map((document) => decodeRecord(fields, document));
    },

    async findRecordByValue(tenantId, object, field, value, exceptUid) {
      const query = byValueQuery(recordLayout(tenantId), object, field, value, exceptUid);
      if (query === null) return null;
      const document = await records(object).findOne(query, options);
      return document ? decodeRecord(object.fields, document) : null;
    },

    async countReferencing(tenantId, source, field, uid) {
      return records(source).countDocuments(
        referencingQuery(recordLayout(tenantId), source, field, uid),
        options,
      );
    },

    async listRecords(tenantId, object, query) {
      const pipeline = listPipeline(object, query, recordLayout(tenantId));
      const documents = await records(object).aggregate(pipeline, options).toArray();
      const fields = query.fields ?? object.fields;
      return documents.map((document) => listedRecordOf(fields, query.lookups, document));
    },

    async countRecords(tenantId, object, filter, now) {
      const pipeline = countPipeline(object, filter, now, recordLayout(tenantId));
      const [counted] = await records(object).aggregate<{ n: number }>(pipeline, options).toArray();
      return Number(counted?.n ?? 0);
    },

    async listRelated(tenantId, object, reference, parentUids, query) {
      if (parentUids.length === 0 || query.limit === 0) return [];
      const pipeline = relatedPipeline(object, reference, parentUids, query, recordLayout(tenantId));
      // A database aggregate: the pipeline starts with `$documents`, the parents.
      const documents = await db.aggregate<Document>(pipeline, options).toArray();
      const fields = query.fields ?? object.fields;
      // Children are told apart by their reference: read it even when the fields leave it out.
      const withReference = fields.includes(reference) ? fields : [...fields, reference];
      return documents.map((document) => decodeListed(withReference, query.lookups, document));
    },

    async exportSequences(tenantId) {
      const counters = db.collection(COLLECTION.counters);
      const documents = await counters
        .find(tenantSequencesQuery(tenantId), { ...options, sort: SEQUENCE_ORDER })
        .toArray();
      return documents.map(sequenceValueOf);
    },
  };
}
