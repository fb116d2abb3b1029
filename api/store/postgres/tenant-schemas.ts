/**
 * Where a tenant's records live: a schema of its own, `t<storage no>`, the
 * number given when the tenant is added and never changed. Numbers read from
 * committed data are kept for the store's life; those a unit of work reads or
 * makes are kept for it, and for the store once it commits (a number made by
 * a unit that rolls back is given again to whoever inserts next).
 *
 * The schema also holds the tenant's sequences (generated names' numbers), a
 * PostgreSQL SEQUENCE each, made by the first unit of work that needs one. A
 * sequence, unlike a counter row, never makes two units that insert at once
 * fail to serialize: it is outside transactions, so a unit that rolls back
 * leaves its number unused (a gap, as the SPEC allows of generated names).
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
  /**
   * The tenant's sequence `name`, as SQL text for `nextval`; made in the runner's transaction the
   * first time this process meets it (IF NOT EXISTS: another process may have made it; two units
   * making it at once fail to serialize, and one runs again). @throws as `schemaOf`.
   */
  sequenceOf(tenantId: string, name: string): Promise<string>;
}

export interface TenantSchemas {
  /** The lookup of reads outside units of work (committed data only). */
  reader(runner: Runner): SchemaLookup;
  /** The lookup of one unit of work, and what to keep once it commits. */
  unit(runner: Runner): SchemaLookup & { committed(): void };
}

/** What a lookup learnt: tenants' schemas, and the sequences known to exist. */
interface Learnt {
  schemas: Map<string, string>;
  sequences: Set<string>;
}

const learnt = (): Learnt => ({ schemas: new Map(), sequences: new Set() });

export function createTenantSchemas(): TenantSchemas {
  const known = learnt();
  const lookup = (runner: Runner, own: Learnt): SchemaLookup => {
    const schemaOf = async (tenantId: string) => {
      const cached = known.schemas.get(tenantId) ?? own.schemas.get(tenantId);
      if (cached !== undefined) return cached;
      const [row] = await runner.rows<{ storage_no: string }>(
        "SELECT storage_no FROM tenants WHERE id = $1",
        [tenantId],
      );
      if (!row) throw new Error(`no tenant ${tenantId}`);
      const schema = schemaName(Number(row.storage_no));
      own.schemas.set(tenantId, schema);
      return schema;
    };
    return {
      schemaOf,
      remember: (tenantId, storageNo) => own.schemas.set(tenantId, schemaName(storageNo)),
      async sequenceOf(tenantId, name) {
        const ref = `${quoteIdent(await schemaOf(tenantId))}.${quoteIdent(`seq ${name}`)}`;
        if (!known.sequences.has(ref) && !own.sequences.has(ref)) {
          await runner.run(`CREATE SEQUENCE IF NOT EXISTS ${ref}`);
          own.sequences.add(ref);
        }
        return ref;
      },
    };
  };
  return {
    reader: (runner) => lookup(runner, known),
    unit(runner) {
      const own = learnt();
      return {
        ...lookup(runner, own),
        committed: () => {
          for (const [tenantId, schema] of own.schemas) known.schemas.set(tenantId, schema);
          for (const ref of own.sequences) known.sequences.add(ref);
        },
      };
    },
  };
}
