/** The config-variable part of a PostgreSQL session (secrets arrive sealed; the store keeps what it is given). */

import { namingNul } from "../../../common/store/postgres/pg-errors.ts";
import type { Runner } from "../../../common/store/postgres/runner.ts";
import type { ConfigReader, ConfigVariable, ConfigWriter } from "../ports/config-port.ts";

const COLUMNS = "tenant_id, key, config_type, value, description, created_at, updated_at";
const SQL = {
  list: `SELECT ${COLUMNS} FROM config_variables WHERE tenant_id = $1 ORDER BY key`,
  find: `SELECT ${COLUMNS} FROM config_variables WHERE tenant_id = $1 AND key = $2`,
  put: `INSERT INTO config_variables (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)
    ON CONFLICT (tenant_id, key) DO UPDATE SET config_type = excluded.config_type, value = excluded.value,
      description = excluded.description, updated_at = excluded.updated_at`,
  delete: "DELETE FROM config_variables WHERE tenant_id = $1 AND key = $2",
};

interface Row {
  tenant_id: string;
  key: string;
  config_type: ConfigVariable["configType"];
  value: string;
  description: string | null;
  created_at: string;
  updated_at: string;
}

const toVariable = (row: Row): ConfigVariable => ({
  tenantId: row.tenant_id,
  key: row.key,
  configType: row.config_type,
  value: row.value,
  description: row.description,
  createdAt: Number(row.created_at),
  updatedAt: Number(row.updated_at),
});

export function createConfigSession(db: Runner): ConfigReader & ConfigWriter {
  return {
    listConfigVariables: async (tenantId) => (await db.rows<Row>(SQL.list, [tenantId])).map(toVariable),
    async findConfigVariable(tenantId, key) {
      const [row] = await db.rows<Row>(SQL.find, [tenantId, key]);
      return row ? toVariable(row) : null;
    },
    async putConfigVariable(v) {
      await namingNul({ key: v.key, value: v.value, description: v.description }, () =>
        db.run(SQL.put, [v.tenantId, v.key, v.configType, v.value, v.description, v.createdAt, v.updatedAt]),
      );
    },
    deleteConfigVariable: async (tenantId, key) => (await db.run(SQL.delete, [tenantId, key])) > 0,
  };
}
