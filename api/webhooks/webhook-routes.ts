/** `/webhooks/*`: definitions, their delivery log and operations, administrators only (SPEC.md §7, §8, §12). */
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
import {
  DEFAULT_ROTATION_GRACE_SECONDS,
  MAX_ROTATION_GRACE_SECONDS,
  type WebhookService,
} from "./webhook-service.ts";

const iso = (ms: number) => new Date(ms).toISOString();
const isoOrNull = (ms: number | null) => (ms === null ? null : iso(ms));

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
  disabledAt: isoOrNull(webhook.disabledAt),
  enabledBy: webhook.enabledBy,
  enabledAt: isoOrNull(webhook.enabledAt),
  // When the secret before the last rotation stops signing (null: none signs beside the current one).
  previousSecretExpiresAt:
    webhook.previousSecretUntil !== null && webhook.previousSecretUntil > Date.now()
      ? iso(webhook.previousSecretUntil)
      : null,
  createdAt: iso(webhook.createdAt),
  updatedAt: iso(webhook.updatedAt),
});

const deliveryView = ({ delivery, attempts }: { delivery: DeliveryRecord; attempts: DeliveryAttempt[] }) => ({
  id: delivery.id,
  webhookId: delivery.webhookId,
  eventId: delivery.eventId,
  // As before event kinds existed: the mutation's id for a mutation's delivery, null for a deferred
  // firing, a tick or a test (whose event id was `test-<uuid>` before event kinds).
  mutationId: delivery.test || /^(deferred|tick):/.test(delivery.eventId) ? null : delivery.eventId,
  part: delivery.part,
  test: delivery.test,
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

/**
 * One delivery in full: as listed, the request sent (the body; the URL and headers of its latest
 * attempt that sent one, secret variables shown as `{{ NAME }}`), and each attempt's own request.
 */
const deliveryDetailView = ({
  delivery,
  attempts,
}: {
  delivery: DeliveryRecord;
  attempts: DeliveryAttempt[];
}) => {
  const listed = deliveryView({ delivery, attempts });
  const sent = attempts.findLast((a) => a.request !== null)?.request ?? null;
  return {
    ...listed,
    request: { body: delivery.body, url: sent?.url ?? null, headers: sent?.headers ?? null },
    attempts: listed.attempts.map((a, i) => ({ ...a, request: attempts[i]?.request ?? null })),
  };
};

const DeliveryListSchema = z
  .object({
    status: z.enum(DELIVERY_STATUSES).optional(),
    since: z.iso.datetime({ offset: true }).optional(),
    until: z.iso.datetime({ offset: true }).optional(),
    limit: z.coerce.number().int().min(1).max(200).default(50),
    /** The `nextCursor` of the page before. */
    after: z.string().max(200).optional(),
    /** The name `after` had first; kept for the clients that use it. */
    cursor: z.string().max(200).optional(),
  })
  .superRefine((q, context) => {
    if (q.since !== undefined && q.until !== undefined && Date.parse(q.until) <= Date.parse(q.since))
      context.addIssue({ code: "custom", path: ["until"], message: "must be after since" });
    if (q.after !== undefined && q.cursor !== undefined)
      context.addIssue({ code: "custom", path: ["cursor"], message: "give after or cursor, not both" });
  });

const RotateSchema = z.object({
  graceSeconds: z
    .number()
    .int()
    .min(0)
    .max(MAX_ROTATION_GRACE_SECONDS)
    .default(DEFAULT_ROTATION_GRACE_SECONDS),
});

const RecoverSchema = z.object({ since: z.iso.datetime({ offset: true }) });

const encodeCursor = (d: DeliveryRecord) =>
  Buffer.from(JSON.stringify([d.createdAt, d.id])).toString("base64url");
function decodeCursor(
  cursor: string | undefined,
  path: string,
): { createdAt: number; id: string } | undefined {
  if (cursor === undefined) return undefined;
  try {
    const [createdAt, id] = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as [number, string];
    if (typeof createdAt === "number" && typeof id === "string") return { createdAt, id };
  } catch {
    // fall through
  }
  throw new ValidationError("the request is invalid", [{ path, message: "not a cursor of this list" }]);
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
        result: webhookView(
          await webhooks.replace(principal.tenantId, params.id, readWebhookInput(body), principal.userId),
        ),
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
          before: q.after !== undefined ? decodeCursor(q.after, "after") : decodeCursor(q.cursor, "cursor"),
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
    .get(
      "/:id/deliveries/:deliveryId",
      async ({ principal, params }) => ({
        result: deliveryDetailView(await webhooks.delivery(principal.tenantId, params.id, params.deliveryId)),
      }),
      doc("Read one delivery in full: the request sent and every attempt"),
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
    )
    .post(
      "/:id/secret/rotate",
      async ({ principal, params, body }) => {
        // No body at all (Elysia reads none as an empty text) asks for the default grace period.
        const none = body === undefined || body === null || body === "";
        const { graceSeconds } = parseBody(RotateSchema, none ? {} : body);
        return {
          result: { secret: await webhooks.rotateSecret(principal.tenantId, params.id, graceSeconds) },
        };
      },
      doc("Give the webhook a new signing secret; the old one signs too for a grace period", {
        body: RotateSchema,
      }),
    )
    .post(
      "/:id/test",
      async ({ principal, params, set }) => {
        const delivery = await webhooks.sendTest(principal.tenantId, params.id);
        set.status = 202;
        return { result: { id: delivery.id, status: delivery.status, test: true } };
      },
      doc("Send an example delivery shaped by the webhook's subscription ({} for a scheduled webhook)", {
        status: 202,
      }),
    )
    .post(
      "/:id/enable",
      async ({ principal, params }) => ({
        result: webhookView(await webhooks.enable(principal.tenantId, params.id, principal.userId)),
      }),
      doc("Enable a webhook a 410 Gone disabled"),
    );
}
