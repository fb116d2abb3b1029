/**
 * The words of the filter language (SPEC.md §4) that cannot start a field path: operators,
 * sub-query words and the literals `true`, `false`, `null`. Case-insensitive, as EQL keywords are.
 * The parser reads them as keywords, and custom field names may not be one of them, so every
 * field stays filterable. (`NOW` and `duration` need a `(` after them, unit words a number before
 * them, so a field may carry those names.)
 */
const RESERVED_WORDS: ReadonlySet<string> = new Set(
  "AND OR NOT IN NOTIN LIKE NOTLIKE INCLUDES EXCLUDES SELECT FROM WHERE TRUE FALSE NULL".split(" "),
);

/** The reserved words, upper case, for messages. */
export const EQL_RESERVED_WORDS: readonly string[] = [...RESERVED_WORDS];

/** Is `word`, in any case, a reserved word of the filter language? */
export function isReservedWord(word: string): boolean {
  return RESERVED_WORDS.has(word.toUpperCase());
}
