/** The config-variable part of a SQLite session. */
import type { Database } from "bun:sqlite";
import type { ConfigReader, ConfigVariable, ConfigWriter } from "../ports/config-port.ts";

interface Row {
  tenant_id: string;
  key: string;
  config_type: ConfigVariable["configType"];
  value: string;
  description: string | null;
  created_at: number;
  updated_at: number;
}

const toVariable = (row: Row): ConfigVariable => ({
  tenantId: row.tenant_id,
  key: row.key,
  configType: row.config_type,
  value: row.value,
  description: row.description,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

export function createConfigSession(db: Database): ConfigReader & ConfigWriter {
  const q = {
    list: db.query<Row, [string]>("SELECT * FROM config_variables WHERE tenant_id = ? ORDER BY key"),
    find: db.query<Row, [string, string]>("SELECT * FROM config_variables WHERE tenant_id = ? AND key = ?"),
    put: db.query(
      `INSERT INTO config_variables (tenant_id, key, config_type, value, description, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (tenant_id, key) DO UPDATE SET
         config_type = excluded.config_type, value = excluded.value,
         description = excluded.description, updated_at = excluded.updated_at`,
    ),
    delete: db.query("DELETE FROM config_variables WHERE tenant_id = ? AND key = ?"),
  };
  return {
    listConfigVariables: async (tenantId) => q.list.all(tenantId).map(toVariable),
    findConfigVariable: async (tenantId, key) => {
      const row = q.find.get(tenantId, key);
      return row ? toVariable(row) : null;
    },
    putConfigVariable: async (v) => {
      q.put.run(v.tenantId, v.key, v.configType, v.value, v.description, v.createdAt, v.updatedAt);
    },
    deleteConfigVariable: async (tenantId, key) => q.delete.run(tenantId, key).changes > 0,
  };
}
