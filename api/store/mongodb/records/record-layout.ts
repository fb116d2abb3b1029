/**
 * Where a tenant's records live in the MongoDB engine, as the EQL → MQL
 * compiler (query/) and the record members read and write them: standard
 * objects' records in `standard_records`, custom objects' in `custom_records`
 * (docs/mongodb-layout.md says why apart), each document one tenant's (`t`)
 * record of one object (`o`, the object's id: a custom object created again
 * under an old name gets a new id, so nothing left behind comes back), its
 * UID in `u` and its values under `d` (record-codec.ts).
 */
import { COLLECTION } from "../../../../common/store/mongodb/layout.ts";
import type { ObjectDef } from "../../../model/catalogue.ts";
import type { MqlLayout } from "../query/mql-layout.ts";

/** A record document's top-level fields (besides `_id`). */
export const RECORD_FIELD = {
  tenant: "t",
  object: "o",
  uid: "u",
  values: "d",
} as const;

/** The collection holding `object`'s records. */
export function recordCollectionOf(object: Pick<ObjectDef, "custom">): string {
  return object.custom ? COLLECTION.customRecords : COLLECTION.standardRecords;
}

/** The records layout of one tenant. */
export function recordLayout(tenantId: string): MqlLayout {
  return {
    collection: recordCollectionOf,
    scope: (object) => ({ [RECORD_FIELD.tenant]: tenantId, [RECORD_FIELD.object]: object.id }),
    valuesPath: RECORD_FIELD.values,
    uidPath: RECORD_FIELD.uid,
  };
}
