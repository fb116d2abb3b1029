/**
 * MongoDB's stand-in for the differential tests, where no MongoDB server can run: records encoded
 * by the MongoDB record codec into documents of the engine's shape (common/store/mongodb/layout.ts:
 * `{_id, t: tenant, o: object id, u: UID, d: values}`, the UID only in `u`), passed through the
 * driver's own BSON serializer and back (what a read returns: int32 and int64 come back as
 * numbers, Decimal128 as itself), and pipelines run by mingo, an independent interpreter of
 * MongoDB's query language.
 *
 * Each object's records are in a collection of their own, after decoys holding every record's UID
 * with values of their own (generated as the records are, from other seeds): the same object's
 * record in another tenant, and this tenant's record of an object the catalogue does not have. A
 * pipeline that forgets the tenant or the object in a lookup or a sub-query reads a decoy and
 * mismatches, as it would in the engine's collections shared by objects; one collection per
 * object keeps what mingo scans for each lookup small (it caches no sub-pipeline and has no index).
 */
import { Aggregator } from "mingo";
import { BSON, type Document } from "mongodb";
import type { ObjectDef } from "../../../api/model/catalogue.ts";
import type { RecordValues } from "../../../api/model/record-values.ts";
import type { MqlLayout } from "../../../api/store/mongodb/query/mql-layout.ts";
import { encodeFields } from "../../../api/store/mongodb/record-codec.ts";
import { RECORD_FIELD, recordLayout } from "../../../api/store/mongodb/records/record-layout.ts";
import { generateRecords } from "./generate-records.ts";
import { createRandom } from "./prng.ts";
import { testObject } from "./test-catalogue.ts";

const TENANT = "t1";
const DECOY_TENANT = "t2";
const DECOY_OBJECT = { id: "decoy-object-id" };
const DECOY_SEED = 991;

/** The collections' layout, as the compiler sees it: the engine's, but a collection per object (see above). */
export const TEST_LAYOUT: MqlLayout = {
  ...recordLayout(TENANT),
  collection: (object: ObjectDef) => object.name,
};

/**
 * A record as the engine's document (`_id` a readable text here, an ObjectId in the engine), its
 * values encoded by the record codec, through the driver's BSON and back; of the object `as`.
 */
export function recordDocument(
  tenant: string,
  object: ObjectDef,
  values: RecordValues,
  as: Pick<ObjectDef, "id"> = object,
): Document {
  const fields = object.fields.filter((field) => field.type !== "id");
  const document = {
    _id: `${tenant}/${as.id}/${values.UID}`,
    [RECORD_FIELD.tenant]: tenant,
    [RECORD_FIELD.object]: as.id,
    [RECORD_FIELD.uid]: values.UID,
    [RECORD_FIELD.values]: encodeFields(fields, values),
  };
  return BSON.deserialize(BSON.serialize(document));
}

/** The documents of the loaded records, and mingo over them. */
export class MingoStore {
  private readonly collections = new Map<string, Document[]>();

  /** Replaces each object's collection with the decoys of its `records`, then the records. */
  load(records: ReadonlyMap<string, readonly RecordValues[]>): void {
    this.collections.clear();
    for (const [name, rows] of records) {
      const object = testObject(name);
      const uids = rows.map((row) => String(row.UID));
      const decoys = (seed: number) => generateRecords(object, uids, createRandom(seed));
      this.collections.set(name, [
        ...decoys(DECOY_SEED).map((values) => recordDocument(DECOY_TENANT, object, values)),
        ...decoys(DECOY_SEED + 1).map((values) => recordDocument(TENANT, object, values, DECOY_OBJECT)),
        ...rows.map((row) => recordDocument(TENANT, object, row)),
      ]);
    }
  }

  /** Every document, as loaded (for checks of what the codec wrote). */
  all(): Document[] {
    return [...this.collections.values()].flat();
  }

  /** Runs `pipeline` on the collection of `object` (`collection.aggregate`). */
  aggregate(object: ObjectDef, pipeline: Document[]): Document[] {
    return this.aggregator(pipeline).run(
      this.collections.get(TEST_LAYOUT.collection(object)) ?? [],
    ) as Document[];
  }

  /** Runs `pipeline` on the database (`db.aggregate`: it starts with `$documents`). */
  aggregateDatabase(pipeline: Document[]): Document[] {
    return this.aggregator(pipeline).run([]) as Document[];
  }

  private aggregator(pipeline: Document[]): Aggregator {
    return new Aggregator(pipeline, {
      collectionResolver: (name: string) => this.collections.get(name) ?? [],
    });
  }
}
