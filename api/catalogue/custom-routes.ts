/** `/custom/*`: custom objects and fields, administrators only (SPEC.md §6). */
import { Elysia } from "elysia";
import { authPlugin } from "../auth/auth-plugin.ts";
import type { AuthService } from "../auth/auth-service.ts";
import { parseBody } from "../http/parse-body.ts";
import { routeDoc } from "../http/route-doc.ts";
import type { CatalogueService } from "./catalogue-service.ts";
import { AddFieldInputSchema, ObjectInputSchema } from "./definition-input.ts";
import { fieldView, objectView } from "./definition-view.ts";

export function customRoutes(auth: AuthService, catalogues: CatalogueService) {
  const track =
    (tracked: boolean) =>
    async ({ principal, params }: { principal: { tenantId: string }; params: { id: string } }) => {
      const object = await catalogues.setTracked(principal.tenantId, params.id, tracked);
      return { result: { id: object.id, tracked: object.tracked } };
    };
  const admin = { auth: "administrator" } as const;
  const doc = (summary: string, body?: Parameters<typeof routeDoc>[0]["body"]) => ({
    ...admin,
    detail: routeDoc({ summary, tags: ["custom objects"], body }),
  });

  return new Elysia({ name: "custom-routes", prefix: "/custom" })
    .use(authPlugin(auth))
    .post(
      "/standalone/schemas",
      async ({ principal, body }) => {
        const object = await catalogues.createObject(principal.tenantId, parseBody(ObjectInputSchema, body));
        return { result: objectView(object) };
      },
      doc("Create a custom object", ObjectInputSchema),
    )
    .post(
      "/standalone/fields",
      async ({ principal, body }) => {
        const field = await catalogues.addField(principal.tenantId, parseBody(AddFieldInputSchema, body));
        return { result: fieldView(field) };
      },
      doc("Add a custom field", AddFieldInputSchema),
    )
    .post("/standalone/track/:id", track(true), doc("Track an object's changes"))
    .delete("/standalone/track/:id", track(false), doc("Stop tracking an object's changes"))
    .post("/standalone/schema/:id/track", track(true), doc("Track an object's changes"))
    .delete("/standalone/schema/:id/track", track(false), doc("Stop tracking an object's changes"))
    .get(
      "/schemas",
      async ({ principal }) => {
        const catalogue = await catalogues.get(principal.tenantId);
        return { result: catalogue.objects.filter((object) => object.custom).map(objectView) };
      },
      doc("List the custom objects"),
    )
    .delete(
      "/standalone/schema/:id",
      async ({ principal, params }) => {
        await catalogues.deleteObject(principal.tenantId, params.id);
        return { result: { id: params.id, deleted: true } };
      },
      doc("Delete a custom object"),
    )
    .delete(
      "/standalone/field/:id",
      async ({ principal, params }) => {
        await catalogues.deleteField(principal.tenantId, params.id);
        return { result: { id: params.id, deleted: true } };
      },
      doc("Delete a custom field"),
    );
}
