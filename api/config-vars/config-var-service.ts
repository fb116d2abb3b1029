/**
 * Config variables of a tenant: `{{ KEY }}` values for webhook URLs and
 * headers. Secrets are sealed (AES-256-GCM) before they reach the store and
 * are never answered back.
 */
import { NotFoundError } from "../../common/errors.ts";
import { configSecretContext, type SecretBox } from "../../common/secret-box.ts";
import type { ConfigVariable, Store } from "../store/store.ts";
import type { ConfigVariableInput } from "./config-var-input.ts";

export const configVariableView = (variable: ConfigVariable) => ({
  key: variable.key,
  value: variable.configType === "secret" ? null : variable.value,
  configType: variable.configType,
  description: variable.description,
  createdAt: new Date(variable.createdAt).toISOString(),
  updatedAt: new Date(variable.updatedAt).toISOString(),
});

export type ConfigVarService = ReturnType<typeof createConfigVarService>;

export function createConfigVarService(store: Store, box: SecretBox, now: () => number = Date.now) {
  return {
    /** Creates or replaces the variable. */
    put: (tenantId: string, input: ConfigVariableInput): Promise<ConfigVariable> =>
      store.unitOfWork(async (tx) => {
        const existing = await tx.findConfigVariable(tenantId, input.key);
        const variable: ConfigVariable = {
          tenantId,
          key: input.key,
          configType: input.configType,
          value:
            input.configType === "secret"
              ? box.seal(input.value, configSecretContext(tenantId, input.key))
              : input.value,
          description: input.description ?? null,
          createdAt: existing?.createdAt ?? now(),
          updatedAt: now(),
        };
        await tx.putConfigVariable(variable);
        return variable;
      }),

    list: (tenantId: string) => store.listConfigVariables(tenantId),

    async get(tenantId: string, key: string): Promise<ConfigVariable> {
      const variable = await store.findConfigVariable(tenantId, key);
      if (!variable) throw new NotFoundError(`no config variable '${key}'`);
      return variable;
    },

    async delete(tenantId: string, key: string): Promise<void> {
      if (!(await store.unitOfWork((tx) => tx.deleteConfigVariable(tenantId, key)))) {
        throw new NotFoundError(`no config variable '${key}'`);
      }
    },
  };
}
