/** Random records of the test catalogue, drawing on the value pools; about a fifth of the values are null. */
import type { FieldDef, ObjectDef } from "../../../api/model/catalogue.ts";
import type { FieldValue, RecordValues } from "../../../api/model/record-values.ts";
import type { Random } from "./prng.ts";
import {
  DANGLING_UID,
  DATES,
  DECIMALS,
  INSTANTS,
  INTS,
  KINDS,
  MINUTES,
  OWNER_UIDS,
  TAGS,
  TEXTS,
  TIMES,
} from "./value-pools.ts";

function referenceValue(random: Random): string {
  return random.chance(0.1) ? DANGLING_UID : random.pick(OWNER_UIDS);
}

function randomValue(field: FieldDef, random: Random): FieldValue {
  if (random.chance(0.2)) return null;
  switch (field.type) {
    case "int":
      return random.pick(INTS);
    case "duration":
      return random.pick(MINUTES);
    case "decimal":
      return random.pick(DECIMALS);
    case "boolean":
      return random.chance(0.5);
    case "datetime":
      return random.pick(INSTANTS);
    case "date":
      return random.pick(DATES);
    case "time":
      return random.pick(TIMES);
    case "picklist":
      return random.pick(KINDS);
    case "multipicklist":
      return TAGS.filter(() => random.chance(0.4));
    case "reference":
      return field.referenceTo === "Owners" ? referenceValue(random) : null;
    default:
      return random.pick(TEXTS);
  }
}

/** One record per uid, every field of `object` filled at random (`UID` set to the uid). */
export function generateRecords(object: ObjectDef, uids: readonly string[], random: Random): RecordValues[] {
  return uids.map((uid) => {
    const record: RecordValues = {};
    for (const field of object.fields)
      record[field.name] = field.type === "id" ? uid : randomValue(field, random);
    return record;
  });
}
