/**
 * Parsed and validated documents, kept per (tenant, schema version, query
 * text), least recently used dropped first. A hit skips parsing and
 * validation entirely; failures are not cached.
 */
import type { DocumentNode, OperationDefinitionNode } from "graphql";
import type { CompiledQuery } from "graphql-jit";
import { setNewest } from "../../common/bounded-map.ts";
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
}

export function createDocumentCache(size: number) {
  const entries = new Map<string, CachedDocument>();
  const keyOf = (tenantId: string, version: number, query: string) =>
    `${tenantId}\u0000${version}\u0000${query}`;
  return {
    get(tenantId: string, version: number, query: string): CachedDocument | undefined {
      const key = keyOf(tenantId, version, query);
      const entry = entries.get(key);
      if (entry) {
        entries.delete(key);
        entries.set(key, entry);
      }
      return entry;
    },
    set(tenantId: string, version: number, query: string, document: DocumentNode): CachedDocument {
      const operations = new Map<string, OperationDefinitionNode>();
      for (const definition of document.definitions) {
        if (definition.kind === "OperationDefinition")
          operations.set(definition.name?.value ?? "", definition);
      }
      const entry = { document, operations, compiled: new Map(), reads: new Map() };

      setNewest(entries, keyOf(tenantId, version, query), entry, size);
      return entry;
    },
  };
}
