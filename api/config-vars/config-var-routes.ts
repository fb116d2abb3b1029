/** `/configuration/extension`: config variables, administrators only (SPEC.md §7). */
import { Elysia } from "elysia";
import { authPlugin } from "../auth/auth-plugin.ts";
import type { AuthService } from "../auth/auth-service.ts";
import { parseBody } from "../http/parse-body.ts";
import { routeDoc } from "../http/route-doc.ts";
import { ConfigVariableInputSchema } from "./config-var-input.ts";
import { type ConfigVarService, configVariableView } from "./config-var-service.ts";

export function configVarRoutes(auth: AuthService, variables: ConfigVarService) {
  const admin = { auth: "administrator" } as const;
  const doc = (summary: string, body?: Parameters<typeof routeDoc>[0]["body"]) => ({
    ...admin,
    detail: routeDoc({ summary, tags: ["config variables"], body }),
  });
  return new Elysia({ name: "config-var-routes", prefix: "/configuration/extension" })
    .use(authPlugin(auth))
    .post(
      "/",
      async ({ principal, body }) => ({
        result: configVariableView(
          await variables.put(principal.tenantId, parseBody(ConfigVariableInputSchema, body)),
        ),
      }),
      doc("Create or replace a config variable", ConfigVariableInputSchema),
    )
    .get(
      "/",
      async ({ principal }) => ({
        result: (await variables.list(principal.tenantId)).map(configVariableView),
      }),
      doc("List the config variables"),
    )
    .get(
      "/:key",
      async ({ principal, params }) => ({
        result: configVariableView(await variables.get(principal.tenantId, params.key)),
      }),
      doc("Read a config variable"),
    )
    .delete(
      "/:key",
      async ({ principal, params }) => {
        await variables.delete(principal.tenantId, params.key);
        return { result: { key: params.key, deleted: true } };
      },
      doc("Delete a config variable"),
    );
}
