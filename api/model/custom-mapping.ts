/**
 * The storage name (`mapping`: table of an object, column of a field) a custom definition takes, and
 * when two storage names are one to an engine. A definition's mapping is derived once, when it is
 * defined, and saved with it: the engines read the saved one, so a definition keeps its mapping
 * whatever this derivation later becomes.
 */
import { createHash } from "node:crypto";

/**
 * The longest identifier every engine keeps whole, in bytes: PostgreSQL cuts longer ones to their
 * first 63 bytes (quietly, in DDL and queries alike), so two longer names agreeing in those would
 * name one table or one column.
 */
export const MAX_MAPPING_BYTES = 63;

/** Characters of the name a shortened mapping keeps: `___` + these + `_` + 8 hex digits is 63 bytes. */
const KEPT_NAME_LENGTH = MAX_MAPPING_BYTES - "___".length - "_".length - 8;

/**
 * The mapping of a custom object or field named `name` (a valid name: ASCII letters, digits and
 * underscores, starting with a letter): `__<name in lower case>` when that fits in
 * MAX_MAPPING_BYTES (every name of up to 61 characters, mapped as it always was); otherwise
 * `___<its first 51 characters in lower case>_<8 hex digits of the SHA-256 of the whole name in
 * lower case>`. Names differing only in case are one name to the catalogue, so the mapping depends
 * on the lower-case name alone. A shortened mapping starts with three underscores, which a short
 * one never does (a name starts with a letter), so the two forms never meet; two long names meet
 * only when their digests do, which the catalogue's clash check (`isSameMapping`) refuses.
 */
export function customMapping(name: string): string {
  const lower = name.toLowerCase();
  const mapping = `__${lower}`;
  if (Buffer.byteLength(mapping) <= MAX_MAPPING_BYTES) return mapping;
  const digest = createHash("sha256").update(lower).digest("hex").slice(0, 8);
  return `___${lower.slice(0, KEPT_NAME_LENGTH)}_${digest}`;
}

/** What an engine tells a mapping by: SQLite ignores ASCII case, PostgreSQL reads the first 63 bytes. */
function mappingKey(mapping: string): string {
  return Buffer.from(mapping.toLowerCase()).subarray(0, MAX_MAPPING_BYTES).toString("latin1");
}

/**
 * Whether two mappings would name the same table or column on some engine: equal without regard to
 * ASCII case, or in their first MAX_MAPPING_BYTES bytes (a mapping saved before mappings were
 * shortened may be longer, and PostgreSQL named its table or column by those bytes alone).
 */
export function isSameMapping(a: string, b: string): boolean {
  return mappingKey(a) === mappingKey(b);
}
