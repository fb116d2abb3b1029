/** The config-variable aggregate of the store port: the variables a tenant's webhook templates read. */
import type { ConfigType } from "../../../common/template.ts";

export { CONFIG_TYPES } from "../../../common/template.ts";

/** A tenant's config variable; a secret's `value` is sealed (encrypted), never the plaintext. */
export interface ConfigVariable {
  tenantId: string;
  key: string;
  configType: ConfigType;
  value: string;
  description: string | null;
  createdAt: number;
  updatedAt: number;
}

/** Reads of a tenant's config variables. */
export interface ConfigReader {
  /** The tenant's variables, by key in code-point order. */
  listConfigVariables(tenantId: string): Promise<ConfigVariable[]>;
  /** The tenant's variable `key` (exact), or null. */
  findConfigVariable(tenantId: string, key: string): Promise<ConfigVariable | null>;
}

/** Writes of config variables (inside a unit of work). */
export interface ConfigWriter {
  /** Creates or replaces a config variable, keeping the creation time of one it replaces. */
  putConfigVariable(variable: ConfigVariable): Promise<void>;
  /** Deletes the tenant's variable `key`; false when it has none. */
  deleteConfigVariable(tenantId: string, key: string): Promise<boolean>;
}
