/**
 * Parsed and validated documents, kept per (tenant, schema version, query
 * text) within a budget of estimated bytes (document-size.ts), least recently
 * used dropped first. A hit skips parsing and validation entirely; failures are
 * not cached. Only a document likely to come again is kept: one that declares
 * variables (clients send a fixed text and the values beside it), or one seen
 * recently. A one-off, such as a mutation with its values written inline,
 * serves its request and is forgotten, so a burst of them neither grows the
 * process nor pushes out the documents that do repeat.
 */
import type { DocumentNode, OperationDefinitionNode } from "graphql";
import type { CompiledQuery } from "graphql-jit";
import { createByteBoundedMap } from "../../common/bounded-map.ts";
import { documentBytes } from "./document-size.ts";
import type { ReadPlan } from "./queries/read-plan.ts";

/** An operation's read plans (queries/read-answers.ts), per values of the variables that shape them. */
export interface OperationReads {
  shapedBy: string[];
  plans: Map<string, ReadPlan | null>;
}

export interface CachedDocument {
  document: DocumentNode;
  /** Operations by name ("" for the anonymous one). */
  operations: Map<string, OperationDefinitionNode>;
  /** graphql-jit's compiled operations by name, made on first run; null where it could not compile. */
  compiled: Map<string, CompiledQuery | null>;
  /** Read plans by operation name, made on first run. */
  reads: Map<string, OperationReads>;
  /** Whether the cache keeps the document: work that only pays off over many runs (a JIT compile) is for kept ones. */
  readonly kept: boolean;
  /**
   * Counts `bytes` more against the cache's budget for something made for this document and kept
   * with it (a compiled operation, a read plan), dropping the least recently used documents (this
   * one too, when it alone is over the budget) until the budget holds again. No-op when not kept.
   */
  account(bytes: number): void;
}

/** How many one-off documents are remembered (as 64-bit hashes: well under 1 MB), to keep the second sighting. */
const SEEN_REMEMBERED = 10_000;

export interface DocumentCacheUsage {
  entries: number;
  bytes: number;
  hits: number;
  misses: number;
}

/** @param maxBytes the budget: the estimated bytes of all kept documents never exceed it. */
export function createDocumentCache(maxBytes: number) {
  const entries = createByteBoundedMap<string, CachedDocument>(maxBytes);
  /** Hashes of the keys of documents seen once and not kept, oldest first. */
  const seen = new Set<bigint>();
  let hits = 0;
  let misses = 0;
  const keyOf = (tenantId: string, version: number, query: string) =>
    `${tenantId}\u0000${version}\u0000${query}`;

  /** True for a document that declares variables or was seen before (which it is then no longer). */
  const isLikelyToRepeat = (key: string, operations: Map<string, OperationDefinitionNode>) => {
    for (const operation of operations.values()) {
      if ((operation.variableDefinitions?.length ?? 0) > 0) return true;
    }
    const hash = BigInt(Bun.hash(key));
    if (seen.delete(hash)) return true;
    seen.add(hash);
    if (seen.size > SEEN_REMEMBERED) seen.delete(seen.values().next().value as bigint);
    return false;
  };

  return {
    get(tenantId: string, version: number, query: string): CachedDocument | undefined {
      const entry = entries.get(keyOf(tenantId, version, query));
      if (entry) hits++;
      else misses++;
      return entry;
    },

    /**
     * The kept entry, not counted: for a try that the caller follows with `get` when it fails, and
     * counts with `countHit` when it answers.
     */
    kept(tenantId: string, version: number, query: string): CachedDocument | undefined {
      return entries.get(keyOf(tenantId, version, query));
    },

    /** Counts a hit of an entry found by `kept` and used. */
    countHit(): void {
      hits++;
    },

    /** The entry of a document just parsed and validated: kept when likely to repeat and within the budget. */
    add(tenantId: string, version: number, query: string, document: DocumentNode): CachedDocument {
      const key = keyOf(tenantId, version, query);
      const operations = new Map<string, OperationDefinitionNode>();
      for (const definition of document.definitions) {
        if (definition.kind === "OperationDefinition")
          operations.set(definition.name?.value ?? "", definition);
      }
      const bytes = documentBytes(query);
      const kept = bytes <= maxBytes && isLikelyToRepeat(key, operations);
      const entry: CachedDocument = {
        document,
        operations,
        compiled: new Map(),
        reads: new Map(),
        kept,
        account: (more: number) => entries.grow(key, entry, more),
      };
      if (kept) entries.set(key, entry, bytes);
      return entry;
    },

    /** How many documents are kept and their estimated bytes; lookups answered from the cache and not, so far. */
    usage(): DocumentCacheUsage {
      return { ...entries.usage(), hits, misses };
    },
  };
}
