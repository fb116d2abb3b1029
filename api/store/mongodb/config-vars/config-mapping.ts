/**
 * The port's config variables (config-port.ts) as `config_variables`
 * documents and back, and the upsert putConfigVariable makes
 * (common/store/mongodb/config-variable-document.ts has the document and what
 * the dispatcher shares). Pure: config-session.ts hands these to the driver.
 */
import type { ConfigVariableDocument } from "../../../../common/store/mongodb/config-variable-document.ts";
import type { ConfigVariable } from "../../ports/config-port.ts";

/** A tenant's variables by key, in code-point order under the simple collation (MQL_COLLATION). */
export const CONFIG_VARIABLE_LIST_SORT = { key: 1 } as const;

/** A stored document as the port's variable. */
export const toConfigVariable = (doc: ConfigVariableDocument): ConfigVariable => ({
  tenantId: doc.t,
  key: doc.key,
  configType: doc.configType,
  value: doc.value,
  description: doc.description,
  createdAt: doc.createdAt,
  updatedAt: doc.updatedAt,
});

/**
 * The update putConfigVariable upserts with configVariableFilter: the type, value, description and
 * updatedAt as given; the creation time only when it inserts (a replaced variable keeps its own).
 * The tenant and key come from the filter's equalities on insert.
 */
export const putConfigVariableUpdate = (v: ConfigVariable) => ({
  $set: { configType: v.configType, value: v.value, description: v.description, updatedAt: v.updatedAt },
  $setOnInsert: { createdAt: v.createdAt },
});
