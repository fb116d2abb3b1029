/**
 * The `config_variables` collection of the MongoDB store as both processes
 * meet it (layout.ts): one document per variable, the filters that find a
 * tenant's variables, and what a delivery reads of them. The API's store
 * maps whole variables (api/store/mongodb/config-vars/config-mapping.ts); the dispatcher
 * reads the ones a template names (`variablesFilter`, `toStoredVariable`).
 * Pure. Strings compare by code point: the collection's collation is the
 * simple one (its default), which the API's reads also pass explicitly.
 */
import type { StoredVariable } from "../../delivery-log/delivery-store.ts";
import type { ConfigType } from "../../template.ts";

/** One document of `config_variables`. Times are ms since the epoch. */
export interface ConfigVariableDocument {
  /** The tenant. */
  t: string;
  /** The variable's key, exact (unique per tenant: the index `config_variable_key`). */
  key: string;
  configType: ConfigType;
  /** Sealed (secret-box.ts) when `configType` is "secret". */
  value: string;
  description: string | null;
  createdAt: number;
  updatedAt: number;
}

/** The tenant's variable `key` (exact: the same key in another case is another variable). */
export const configVariableFilter = (tenantId: string, key: string) => ({ t: tenantId, key });

/** The tenant's variables among `keys`. */
export const variablesFilter = (tenantId: string, keys: readonly string[]) => ({
  t: tenantId,
  key: { $in: [...keys] },
});

/** The fields a delivery reads of a variable (a find's projection; `_id` left out). */
export const STORED_VARIABLE_PROJECTION = { _id: 0, key: 1, configType: 1, value: 1 } as const;

/** A variable's document as a delivery needs it. */
export const toStoredVariable = (
  doc: Pick<ConfigVariableDocument, "key" | "configType" | "value">,
): StoredVariable => ({ key: doc.key, configType: doc.configType, value: doc.value });
