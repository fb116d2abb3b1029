/**
 * MongoDB's stand-in for the differential tests, where no MongoDB server can run: records encoded
 * by the MongoDB record codec into documents of the engine's shape (one shared collection, each
 * document `{_id, t: tenant, o: object, d: values}`), passed through the driver's own BSON
 * serializer and back (what a read returns: int32 and int64 come back as numbers, Decimal128 as
 * itself), and pipelines run by mingo, an independent interpreter of MongoDB's query language.
 * A second tenant holds the same UIDs with other values (each record gets the next one's), so a
 * pipeline that forgets the tenant in a lookup or a sub-query reads wrong values and mismatches.
 */
import { Aggregator } from "mingo";
import { BSON, type Document } from "mongodb";
import type { ObjectDef } from "../../../api/model/catalogue.ts";
import type { RecordValues } from "../../../api/model/record-values.ts";
import type { MqlLayout } from "../../../api/store/mongodb/query/mql-layout.ts";
import { encodeFields } from "../../../api/store/mongodb/record-codec.ts";
import { testObject } from "./test-catalogue.ts";

const TENANT = "t1";
const DECOY_TENANT = "t2";
const COLLECTION = "records";

/** The shared collection's layout, as the compiler sees it. */
export const TEST_LAYOUT: MqlLayout = {
  collection: () => COLLECTION,
  scope: (object: ObjectDef) => ({ t: TENANT, o: object.name }),
  valuesPath: "d",
  uidPath: "d.uid",
};

function documentOf(tenant: string, object: ObjectDef, values: RecordValues): Document {
  const document = {
    _id: `${tenant}/${object.name}/${values.UID}`,
    t: tenant,
    o: object.name,
    d: encodeFields(object.fields, values),
  };
  return BSON.deserialize(BSON.serialize(document));
}

/** The documents of the loaded records, and mingo over them. */
export class MingoStore {
  private documents: Document[] = [];

  /** Replaces the collection's documents with `records` (by object name) and the decoy tenant's. */
  load(records: ReadonlyMap<string, readonly RecordValues[]>): void {
    this.documents = [];
    for (const [name, rows] of records) {
      const object = testObject(name);
      rows.forEach((row, i) => {
        this.documents.push(documentOf(TENANT, object, row));
        const other = rows[(i + 1) % rows.length] as RecordValues;
        this.documents.push(documentOf(DECOY_TENANT, object, { ...other, UID: row.UID ?? null }));
      });
    }
  }

  /** Every document, as loaded (for checks of what the codec wrote). */
  all(): readonly Document[] {
    return this.documents;
  }

  /** Runs `pipeline` on the collection (`collection.aggregate`). */
  aggregate(pipeline: Document[]): Document[] {
    return this.aggregator(pipeline).run(this.documents) as Document[];
  }

  /** Runs `pipeline` on the database (`db.aggregate`: it starts with `$documents`). */
  aggregateDatabase(pipeline: Document[]): Document[] {
    return this.aggregator(pipeline).run([]) as Document[];
  }

  private aggregator(pipeline: Document[]): Aggregator {
    return new Aggregator(pipeline, {
      collectionResolver: (name: string) => (name === COLLECTION ? this.documents : []),
    });
  }
}
