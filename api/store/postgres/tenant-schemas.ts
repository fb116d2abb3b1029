/**
 * Where a tenant's records live: a schema of its own, `t<storage no>`, the
 * number given when the tenant is added and never changed. Numbers read from
 * committed data are kept for the store's life; those a unit of work reads or
 * makes are kept for it, and for the store once it commits (a number made by
 * a unit that rolls back is given again to whoever inserts next).
 */

import type { Runner } from "../../../common/store/postgres/runner.ts";
import type { ObjectDef } from "../../model/catalogue.ts";
import { quoteIdent } from "../sql/quote-ident.ts";

/** A tenant's schema name. */
export const schemaName = (storageNo: number) => `t${storageNo}`;

/** An object's table in its tenant's schema, as SQL. */
export const tableRef = (schema: string, object: Pick<ObjectDef, "mapping">) =>
  `${quoteIdent(schema)}.${quoteIdent(object.mapping)}`;

export interface SchemaLookup {
  /** The tenant's schema. @throws Error for a tenant there is none of. */
  schemaOf(tenantId: string): Promise<string>;
  /** Notes the number a tenant inserted by this unit of work got. */
  remember(tenantId: string, storageNo: number): void;
}

export interface TenantSchemas {
  /** The lookup of reads outside units of work (committed data only). */
  reader(runner: Runner): SchemaLookup;
  /** The lookup of one unit of work, and what to keep once it commits. */
  unit(runner: Runner): SchemaLookup & { committed(): void };
}

export function createTenantSchemas(): TenantSchemas {
  const known = new Map<string, string>();
  const lookup = (runner: Runner, own: Map<string, string>): SchemaLookup => ({
    async schemaOf(tenantId) {
      const cached = known.get(tenantId) ?? own.get(tenantId);
      if (cached !== undefined) return cached;
      const [row] = await runner.rows<{ storage_no: string }>(
        "SELECT storage_no FROM tenants WHERE id = $1",
        [tenantId],
      );
      if (!row) throw new Error(`no tenant ${tenantId}`);
      const schema = schemaName(Number(row.storage_no));
      own.set(tenantId, schema);
      return schema;
    },
    remember: (tenantId, storageNo) => own.set(tenantId, schemaName(storageNo)),
  });
  return {
    reader: (runner) => lookup(runner, known),
    unit(runner) {
      const own = new Map<string, string>();
      return {
        ...lookup(runner, own),
        committed: () => {
          for (const [tenantId, schema] of own) known.set(tenantId, schema);
        },
      };
    },
  };
}
