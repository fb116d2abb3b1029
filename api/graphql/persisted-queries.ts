/**
 * Automatic persisted queries (Apollo's protocol: `extensions.persistedQuery = {version: 1,
 * sha256Hash}`): a request in, the query text to run out, or the PersistedQueryNotFound answer
 * that makes the client send the text once. Queries are kept per tenant (a hash one tenant
 * registered means nothing to another) in this process's memory, least recently used first out,
 * bounded by bytes per tenant and in all. A query is kept only when its SHA-256 is the hash it was
 * sent with, so a hash always stands for the text it names and nobody can plant another under it.
 */
import { createHash } from "node:crypto";
import { ValidationError } from "../../common/errors.ts";
import type { HttpGraphQLRequest } from "./graphql-request.ts";

/** Bytes an entry costs beyond its query text: the hash, the keys, the maps' own entries (rough). */
const ENTRY_OVERHEAD_BYTES = 160;

export interface PersistedQueryLimits {
  /** Bytes one tenant's queries may hold. */
  tenantBytes: number;
  /** Bytes all tenants' queries may hold together. */
  totalBytes: number;
}

interface Entry {
  tenantId: string;
  hash: string;
  query: string;
  bytes: number;
}

export type PersistedQueryStore = ReturnType<typeof createPersistedQueryStore>;

/** An LRU store by bytes: each tenant's entries, and all entries, in use order (oldest first). */
export function createPersistedQueryStore(limits: PersistedQueryLimits) {
  const all = new Map<string, Entry>();
  const byTenant = new Map<string, { entries: Map<string, Entry>; bytes: number }>();
  let totalBytes = 0;
  const keyOf = (tenantId: string, hash: string) => `${tenantId}\u0000${hash}`;

  function remove(entry: Entry): void {
    all.delete(keyOf(entry.tenantId, entry.hash));
    const tenant = byTenant.get(entry.tenantId);
    if (!tenant) return;
    tenant.entries.delete(entry.hash);
    tenant.bytes -= entry.bytes;
    if (tenant.entries.size === 0) byTenant.delete(entry.tenantId);
    totalBytes -= entry.bytes;
  }

  function touch(entry: Entry): void {
    const key = keyOf(entry.tenantId, entry.hash);
    all.delete(key);
    all.set(key, entry);
    const entries = byTenant.get(entry.tenantId)?.entries;
    entries?.delete(entry.hash);
    entries?.set(entry.hash, entry);
  }

  return {
    get(tenantId: string, hash: string): string | undefined {
      const entry = all.get(keyOf(tenantId, hash));
      if (entry) touch(entry);
      return entry?.query;
    },

    /** Keeps a query (already checked against its hash); one larger than either bound is not kept. */
    set(tenantId: string, hash: string, query: string): void {
      const existing = all.get(keyOf(tenantId, hash));
      if (existing) {
        touch(existing);
        return;
      }
      const bytes = Buffer.byteLength(query) + ENTRY_OVERHEAD_BYTES;
      if (bytes > limits.tenantBytes || bytes > limits.totalBytes) return;
      let tenant = byTenant.get(tenantId);
      while (tenant && tenant.bytes + bytes > limits.tenantBytes) {
        remove(tenant.entries.values().next().value as Entry);
        tenant = byTenant.get(tenantId);
      }
      while (totalBytes + bytes > limits.totalBytes) remove(all.values().next().value as Entry);
      tenant = byTenant.get(tenantId) ?? { entries: new Map(), bytes: 0 };
      byTenant.set(tenantId, tenant);
      const entry = { tenantId, hash, query, bytes };
      tenant.entries.set(hash, entry);
      tenant.bytes += bytes;
      all.set(keyOf(tenantId, hash), entry);
      totalBytes += bytes;
    },

    /** Bytes held, by one tenant or in all (for tests and metrics). */
    bytes(tenantId?: string): number {
      return tenantId === undefined ? totalBytes : (byTenant.get(tenantId)?.bytes ?? 0);
    },
  };
}

const SHA256_HEX = /^[0-9a-f]{64}$/;

export const sha256Hex = (text: string) => createHash("sha256").update(text).digest("hex");

/** What a request's query is: its text, or unknown (the client is to send the text). */
export type ResolvedQuery = { query: string } | { notFound: true };

/**
 * The query a request runs. Without `extensions.persistedQuery`, its own text. With it: the text
 * kept under the hash when the request has none (else notFound), or the request's text, which is
 * kept under the hash once its SHA-256 is checked to be that hash.
 * @throws ValidationError for a persistedQuery that is not `{version: 1, sha256Hash: <64 hex>}`, or
 * whose hash is not the SHA-256 of the query sent with it.
 */
export function resolveQuery(
  store: PersistedQueryStore,
  tenantId: string,
  request: HttpGraphQLRequest,
  at = "",
): ResolvedQuery {
  const persisted = request.extensions?.persistedQuery;
  if (persisted === undefined) return { query: request.query as string };
  const path = `${at}extensions.persistedQuery`;
  const invalid = (member: string, message: string) =>
    new ValidationError("the request body is invalid", [{ path: `${path}${member}`, message }]);
  if (typeof persisted !== "object" || persisted === null) throw invalid("", "must be an object");
  const { version, sha256Hash } = persisted as Record<string, unknown>;
  if (version !== 1) throw invalid(".version", "only version 1 is supported");
  const hash = typeof sha256Hash === "string" ? sha256Hash.toLowerCase() : "";
  if (!SHA256_HEX.test(hash)) throw invalid(".sha256Hash", "must be a SHA-256 hash in 64 hex digits");
  if (request.query === null) {
    const query = store.get(tenantId, hash);
    return query === undefined ? { notFound: true } : { query };
  }
  if (sha256Hex(request.query) !== hash) throw invalid(".sha256Hash", "is not the SHA-256 of the query sent");
  store.set(tenantId, hash, request.query);
  return { query: request.query };
}
