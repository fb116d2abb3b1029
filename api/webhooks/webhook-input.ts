/** The body of `POST /webhooks` and `PUT /webhooks/{id}` (SPEC.md §7, §11: every kind), checked at the trust boundary. */
import { z } from "zod";
import type { ErrorDetail } from "../../common/errors.ts";
import { asJsonObject, detailsOf } from "../http/parse-body.ts";
import type { DeferredOffset, WebhookKind, WebhookRecord } from "../store/store.ts";

/** Headers the service sets itself; a webhook may not override them. */
const RESERVED_HEADERS =
  /^(content-type|content-length|host|user-agent|connection|transfer-encoding|webhook-.*|service-.*)$/i;

/** A header name as HTTP allows it (a token). */
const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/;

const HeadersSchema = z
  .record(
    z.string(),
    z
      .string()
      .max(4096)
      .refine((value) => !/[\r\n\0]/.test(value), "must not contain line breaks"),
  )
  .superRefine((headers, ctx) => {
    const names = Object.keys(headers);
    if (names.length > 50) ctx.addIssue({ code: "custom", message: "at most 50 headers" });
    for (const name of names) {
      if (!HEADER_NAME.test(name))
        ctx.addIssue({ code: "custom", path: [name], message: "not a valid header name" });
      else if (RESERVED_HEADERS.test(name))
        ctx.addIssue({ code: "custom", path: [name], message: "set by the service; cannot be overridden" });
    }
  })
  .default({});

/** Offsets beyond a year either way are refused: a due time must stay a date. */
const MAX_OFFSET_MS = 366 * 86_400_000;
const OffsetMs = z.number().int().min(-MAX_OFFSET_MS).max(MAX_OFFSET_MS);

const common = {
  name: z.string().trim().min(1).max(255),
  url: z.string().min(1).max(2048),
  headers: HeadersSchema,
};
const Query = z.string().min(1).max(65_536);

/** `type: "graphql"`: a change subscription (SPEC.md §7). */
const GraphqlWebhookInput = z.object({ ...common, type: z.literal("graphql"), query: Query });

/** `type: "graphql_deferred"`: a record fires once at `field + offset` (SPEC.md §11). */
const DeferredWebhookInput = z.object({
  ...common,
  type: z.literal("graphql_deferred"),
  field: z.string().min(1).max(255),
  offset: z.union([
    OffsetMs,
    z.strictObject({ field: z.string().min(1).max(255), default: OffsetMs.optional() }),
  ]),
  query: Query,
  filter: z.string().min(1).max(8192).optional(),
});

/** `type: "scheduled"`: `{}` POSTed at every tick of a 5-field UTC cron (SPEC.md §11). */
const ScheduledWebhookInput = z.object({
  ...common,
  type: z.literal("scheduled"),
  cron: z.string().min(1).max(255),
});

export const WebhookInputSchema = z.discriminatedUnion("type", [
  GraphqlWebhookInput,
  DeferredWebhookInput,
  ScheduledWebhookInput,
]);

export type WebhookInput = z.infer<typeof WebhookInputSchema>;

/** A definition as stored: what every kind has, and what its kind adds in `options` (null for graphql). */
export type WebhookDefinition = Pick<
  WebhookRecord,
  "name" | "url" | "headers" | "type" | "query" | "options"
>;

/** The definition `input` describes. */
function definitionOf(input: WebhookInput): WebhookDefinition {
  const { name, url, headers } = input;
  switch (input.type) {
    case "graphql":
      return { name, url, headers, type: input.type, query: input.query, options: null };
    case "graphql_deferred": {
      const { field, offset, filter } = input;
      return {
        name,
        url,
        headers,
        type: input.type,
        query: input.query,
        options: { field, offset, ...(filter === undefined ? {} : { filter }) },
      };
    }
    case "scheduled":
      return { name, url, headers, type: input.type, query: "", options: { cron: input.cron } };
  }
}

/** The parts of a definition that are checked against the tenant (variables, subscription, cron, deferred fields). */
export interface WebhookParts {
  url?: string;
  headers?: Record<string, string>;
  type?: WebhookKind;
  query?: string;
  cron?: string;
  field?: string;
  offset?: DeferredOffset;
  filter?: string;
}

/** A body read as a webhook definition, to be checked against the tenant next: every problem is told at once. */
export interface WebhookDraft {
  /** The definition, when the body is well-formed. */
  input: WebhookDefinition | null;
  /** What is wrong with the body's shape. */
  problems: ErrorDetail[];
  /** The parts well-formed on their own, checked further even when others are not. */
  parts: WebhookParts;
}

/** @throws BadRequestError when the body is not a JSON object. */
export function readWebhookInput(body: unknown): WebhookDraft {
  const raw = asJsonObject(body);
  const parsed = WebhookInputSchema.safeParse(raw);
  if (parsed.success) return { input: definitionOf(parsed.data), problems: [], parts: parsed.data };
  const deferred = DeferredWebhookInput.shape;
  const type = z.enum(["graphql", "graphql_deferred", "scheduled"]).safeParse(raw.type).data;
  return {
    input: null,
    problems: detailsOf(parsed.error),
    parts: {
      url: common.url.safeParse(raw.url).data,
      headers: common.headers.safeParse(raw.headers).data,
      type,
      query: type === "scheduled" ? undefined : Query.safeParse(raw.query).data,
      cron: type === "scheduled" ? ScheduledWebhookInput.shape.cron.safeParse(raw.cron).data : undefined,
      ...(type === "graphql_deferred"
        ? {
            field: deferred.field.safeParse(raw.field).data,
            offset: deferred.offset.safeParse(raw.offset).data,
            filter: deferred.filter.safeParse(raw.filter).data,
          }
        : {}),
    },
  };
}
