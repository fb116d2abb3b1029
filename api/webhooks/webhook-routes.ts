/** `/webhooks/*`: definitions and their delivery log, administrators only (SPEC.md §7–8). */
import { Elysia } from "elysia";
import { z } from "zod";
import { ValidationError } from "../../common/errors.ts";

import { authPlugin } from "../auth/auth-plugin.ts";
import type { AuthService } from "../auth/auth-service.ts";
import { parseBody, parseQuery } from "../http/parse-body.ts";
import { routeDoc } from "../http/route-doc.ts";
import {
  DELIVERY_STATUSES,
  type DeliveryAttempt,
  type DeliveryRecord,
  type WebhookRecord,
} from "../store/store.ts";
import { readWebhookInput, WebhookInputSchema } from "./webhook-input.ts";
import type { WebhookService } from "./webhook-service.ts";

const iso = (ms: number) => new Date(ms).toISOString();

const webhookView = (webhook: WebhookRecord) => ({
  id: webhook.id,
  name: webhook.name,
  url: webhook.url,
  type: webhook.type,
  // A scheduled webhook has no query; what a kind adds (field, offset, filter; cron) is shown as it was given.
  ...(webhook.type === "scheduled" ? {} : { query: webhook.query }),
  ...webhook.options,
  headers: webhook.headers,
  enabled: webhook.enabled,
  disabledReason: webhook.disabledReason,
  createdAt: iso(webhook.createdAt),
  updatedAt: iso(webhook.updatedAt),
});

const deliveryView = ({ delivery, attempts }: { delivery: DeliveryRecord; attempts: DeliveryAttempt[] }) => ({
  id: delivery.id,
  webhookId: delivery.webhookId,
  eventId: delivery.eventId,
  // As before event kinds existed: the mutation's id for a mutation's delivery, null for a deferred firing or a tick.
  mutationId: /^(deferred|tick):/.test(delivery.eventId) ? null : delivery.eventId,
  part: delivery.part,
  status: delivery.status,
  attemptCount: delivery.attempts,
  committedAt: iso(delivery.committedAt),
  createdAt: iso(delivery.createdAt),
  updatedAt: iso(delivery.updatedAt),
  attempts: attempts.map((a) => ({
    attempt: a.attempt,
    at: iso(a.startedAt),
    durationMs: a.durationMs,
    statusCode: a.statusCode,
    responseBody: a.responseBody,
    error: a.error,
  })),
});

const DeliveryListSchema = z.object({
  status: z.enum(DELIVERY_STATUSES).optional(),
  since: z.iso.datetime({ offset: true }).optional(),
  until: z.iso.datetime({ offset: true }).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().max(200).optional(),
});

const RecoverSchema = z.object({ since: z.iso.datetime({ offset: true }) });

const encodeCursor = (d: DeliveryRecord) =>
  Buffer.from(JSON.stringify([d.createdAt, d.id])).toString("base64url");
function decodeCursor(cursor: string | undefined): { createdAt: number; id: string } | undefined {
  if (!cursor) return undefined;
  try {
    const [createdAt, id] = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as [number, string];
    if (typeof createdAt === "number" && typeof id === "string") return { createdAt, id };
  } catch {
    // fall through
  }
  throw new ValidationError("the request is invalid", [
    { path: "cursor", message: "not a cursor of this list" },
  ]);
}

export function webhookRoutes(auth: AuthService, webhooks: WebhookService) {
  const admin = { auth: "administrator" } as const;
  const doc = (summary: string, more: Omit<Parameters<typeof routeDoc>[0], "summary" | "tags"> = {}) => ({
    ...admin,
    detail: routeDoc({ summary, tags: ["webhooks"], ...more }),
  });
  return new Elysia({ name: "webhook-routes", prefix: "/webhooks" })
    .use(authPlugin(auth))
    .post(
      "/",
      async ({ principal, body, set }) => {
        const { webhook, secret } = await webhooks.create(principal.tenantId, readWebhookInput(body));
        set.status = 201;
        return { result: { ...webhookView(webhook), secret } };
      },
      doc("Create a webhook", { body: WebhookInputSchema, status: 201 }),
    )
    .get(
      "/",
      async ({ principal }) => ({ result: (await webhooks.list(principal.tenantId)).map(webhookView) }),
      doc("List the webhooks"),
    )
    .get(
      "/deferred/schema",
      async ({ principal, set }) => {
        set.headers["content-type"] = "text/plain; charset=utf-8";
        return webhooks.deferredSchema(principal.tenantId);
      },
      doc("The deferred schema (SDL) that deferred webhooks' queries are written against"),
    )
    .get(
      "/:id",
      async ({ principal, params }) => ({
        result: webhookView(await webhooks.get(principal.tenantId, params.id)),
      }),
      doc("Read a webhook"),
    )
    .put(
      "/:id",
      async ({ principal, params, body }) => ({
        result: webhookView(await webhooks.replace(principal.tenantId, params.id, readWebhookInput(body))),
      }),
      doc("Replace a webhook", { body: WebhookInputSchema }),
    )
    .delete(
      "/:id",
      async ({ principal, params }) => {
        await webhooks.delete(principal.tenantId, params.id);
        return { result: { id: params.id, deleted: true } };
      },
      doc("Delete a webhook"),
    )
    .get(
      "/:id/deliveries",
      async ({ principal, params, query }) => {
        const q = parseQuery(DeliveryListSchema, query);
        const rows = await webhooks.deliveries(principal.tenantId, params.id, {
          status: q.status,
          since: q.since === undefined ? undefined : Date.parse(q.since),
          until: q.until === undefined ? undefined : Date.parse(q.until),
          before: decodeCursor(q.cursor),
          limit: q.limit,
        });
        const last = rows[rows.length - 1];
        return {
          result: rows.map(deliveryView),
          nextCursor: rows.length === q.limit && last ? encodeCursor(last.delivery) : null,
        };
      },
      doc("List a webhook's deliveries, newest first", { query: DeliveryListSchema }),
    )
    .post(
      "/:id/deliveries/:deliveryId/retry",
      async ({ principal, params, set }) => {
        const delivery = await webhooks.retry(principal.tenantId, params.id, params.deliveryId);
        set.status = 202;
        return { result: { id: delivery.id, status: delivery.status } };
      },
      doc("Deliver a delivery again", { status: 202 }),
    )
    .post(
      "/:id/recover",
      async ({ principal, params, body, set }) => {
        const { since } = parseBody(RecoverSchema, body);
        const requeued = await webhooks.recover(principal.tenantId, params.id, Date.parse(since));
        set.status = 202;
        return { result: { requeued } };
      },
      doc("Deliver again what failed since a time", { body: RecoverSchema, status: 202 }),
    );
}
