/**
 * Tenant schemas built once per catalogue version and kept for the most
 * recently used tenants. A build is synchronous (pure), so there is never more
 * than one build per tenant at a time; the SDL and its ETag are made on first
 * ask and kept with the schema.
 */
import { createHash } from "node:crypto";
import { type GraphQLSchema, printSchema } from "graphql";
import { setNewest } from "../../../common/bounded-map.ts";
import type { Catalogue } from "../../model/catalogue.ts";

export interface TenantSchema {
  version: number;
  schema: GraphQLSchema;
  /** The schema in SDL with its strong ETag. */
  sdl(): { text: string; etag: string };
}

export type SchemaCache = ReturnType<typeof createSchemaCache>;

export function createSchemaCache(build: (catalogue: Catalogue) => GraphQLSchema, size: number) {
  const entries = new Map<string, TenantSchema>();
  return {
    /** The schema of `catalogue`'s tenant at `catalogue.version`, built now if not cached. */
    get(catalogue: Catalogue): TenantSchema {
      let entry = entries.get(catalogue.tenantId);
      if (entry?.version !== catalogue.version) entry = makeEntry(catalogue, build(catalogue));
      setNewest(entries, catalogue.tenantId, entry, size);
      return entry;
    },
  };
}

function makeEntry(catalogue: Catalogue, schema: GraphQLSchema): TenantSchema {
  let sdl: { text: string; etag: string } | undefined;
  return {
    version: catalogue.version,
    schema,
    sdl() {
      if (!sdl) {
        const text = printSchema(schema);
        sdl = { text, etag: `"${createHash("sha256").update(text).digest("base64url").slice(0, 27)}"` };
      }
      return sdl;
    },
  };
}
