/**
 * The config-variable part of a MongoDB session (`config_variables`): secrets
 * arrive sealed and are kept as given. Keys are exact and listed in
 * code-point order: every call passes the simple collation (MQL_COLLATION),
 * whatever the collection's default, so "B" is neither "b" nor sorted beside it.
 */
import type { ClientSession, Db } from "mongodb";
import {
  type ConfigVariableDocument,
  configVariableFilter,
} from "../../../../common/store/mongodb/config-variable-document.ts";
import { COLLECTION } from "../../../../common/store/mongodb/layout.ts";
import type { ConfigReader, ConfigWriter } from "../../ports/config-port.ts";
import { MQL_COLLATION } from "../query/mql-layout.ts";
import { CONFIG_VARIABLE_LIST_SORT, putConfigVariableUpdate, toConfigVariable } from "./config-mapping.ts";

/** The config-variable members on `db`, in the unit of work of `session` when given. */
export function createConfigSession(db: Db, session: ClientSession | null): ConfigReader & ConfigWriter {
  const variables = db.collection<ConfigVariableDocument>(COLLECTION.configVariables);
  const options = { ...(session ? { session } : {}), collation: MQL_COLLATION };
  return {
    listConfigVariables: async (tenantId) =>
      (await variables.find({ t: tenantId }, options).sort(CONFIG_VARIABLE_LIST_SORT).toArray()).map(
        toConfigVariable,
      ),
    async findConfigVariable(tenantId, key) {
      const doc = await variables.findOne(configVariableFilter(tenantId, key), options);
      return doc ? toConfigVariable(doc) : null;
    },
    async putConfigVariable(v) {
      await variables.updateOne(configVariableFilter(v.tenantId, v.key), putConfigVariableUpdate(v), {
        ...options,
        upsert: true,
      });
    },
    deleteConfigVariable: async (tenantId, key) =>
      (await variables.deleteOne(configVariableFilter(tenantId, key), options)).deletedCount > 0,
  };
}
