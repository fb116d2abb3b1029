/**
 * What a cached document costs in memory, estimated (the document cache bounds
 * the sum): the parsed and validated document from its text's length; a
 * graphql-jit compiled operation and a read plan from the number of fields the
 * operation selects, fragments spread out (what both are made from). Pure.
 *
 * The factors are heap growth per kept document, measured with bun:jsc
 * `heapStats()` after `Bun.gc(true)` over 100 to 500 documents of each shape
 * (one-insert and 100-insert mutations, flat and nested queries, fragments;
 * read plans shaped by filters of 42 and 9,486 characters), then rounded up so
 * that the estimate is above what was measured (by 10% to 2×).
 */
import {
  type DocumentNode,
  type FragmentDefinitionNode,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from "graphql";

/** A cache entry's fixed part: its key, maps and bookkeeping. */
const ENTRY_BYTES = 6144;
/** The document per character of its text: tokens, AST nodes with their locations, the text itself (twice, in the key). */
const DOCUMENT_BYTES_PER_CHAR = 32;
/** A compiled operation's fixed part: its closures and bound query function. */
const COMPILED_BYTES = 24 * 1024;
/** A compiled operation per selected field: generated code, its compiled form, resolve infos. */
const COMPILED_BYTES_PER_FIELD = 2048;
/** A read plan's fixed part: its read tree's root, statement, slots. */
const PLAN_BYTES = 12 * 1024;
/** A read plan per selected field: read-tree node, slot, rendered SQL. */
const PLAN_BYTES_PER_FIELD = 768;
/** A read plan per character of the texts that shaped it (its key): the checked filter and order, their SQL. */
const PLAN_BYTES_PER_KEY_CHAR = 12;

/** The estimated bytes of a parsed and validated document of this text, with its cache entry. */
export function documentBytes(query: string): number {
  return ENTRY_BYTES + query.length * DOCUMENT_BYTES_PER_CHAR;
}

/** The estimated bytes of `operation` compiled by graphql-jit. */
export function compiledBytes(document: DocumentNode, operation: OperationDefinitionNode): number {
  return COMPILED_BYTES + selectedFieldCount(document, operation) * COMPILED_BYTES_PER_FIELD;
}

/** The estimated bytes of a read plan of `operation`, kept under `key` (its shaping variables' values). */
export function planBytes(document: DocumentNode, operation: OperationDefinitionNode, key: string): number {
  return (
    PLAN_BYTES +
    selectedFieldCount(document, operation) * PLAN_BYTES_PER_FIELD +
    key.length * PLAN_BYTES_PER_KEY_CHAR
  );
}

/**
 * How many fields `operation` selects, each fragment spread counted as its fields (every fragment
 * counted once and reused, so a fragment spread many times costs no more time to count).
 */
export function selectedFieldCount(document: DocumentNode, operation: OperationDefinitionNode): number {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  const counted = new Map<string, number>();
  const fragmentFields = (name: string): number => {
    let count = counted.get(name);
    if (count === undefined) {
      // Validated documents have no fragment cycles; the zero guards the walk all the same.
      counted.set(name, 0);
      count = fields(fragments.get(name)?.selectionSet);
      counted.set(name, count);
    }
    return count;
  };
  const fields = (selectionSet: SelectionSetNode | undefined): number => {
    let count = 0;
    for (const selection of selectionSet?.selections ?? []) {
      if (selection.kind === Kind.FIELD) count += 1 + fields(selection.selectionSet);
      else if (selection.kind === Kind.INLINE_FRAGMENT) count += fields(selection.selectionSet);
      else count += fragmentFields(selection.name.value);
    }
    return count;
  };
  return fields(operation.selectionSet);
}
