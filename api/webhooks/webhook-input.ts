/** The body of `POST /webhooks` and `PUT /webhooks/{id}` (SPEC.md §7), checked at the trust boundary. */
import { z } from "zod";
import type { ErrorDetail } from "../../common/errors.ts";
import { asJsonObject, detailsOf } from "../http/parse-body.ts";

/** Headers the service sets itself; a webhook may not override them. */
const RESERVED_HEADERS =
  /^(content-type|content-length|host|user-agent|connection|transfer-encoding|webhook-.*|service-.*)$/i;

/** A header name as HTTP allows it (a token). */
const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/;

export const WebhookInputSchema = z.object({
  name: z.string().trim().min(1).max(255),
  url: z.string().min(1).max(2048),
  type: z.literal("graphql"),
  query: z.string().min(1).max(65_536),
  headers: z
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
    .default({}),
});

export type WebhookInput = z.infer<typeof WebhookInputSchema>;

/** The parts of a definition that are checked against the tenant (variables, subscription). */
export type WebhookParts = Partial<Pick<WebhookInput, "url" | "headers" | "query">>;

/** A body read as a webhook definition, to be checked against the tenant next: every problem is told at once. */
export interface WebhookDraft {
  /** The definition, when the body is well-formed. */
  input: WebhookInput | null;
  /** What is wrong with the body's shape. */
  problems: ErrorDetail[];
  /** The parts well-formed on their own, checked further even when others are not. */
  parts: WebhookParts;
}

/** @throws BadRequestError when the body is not a JSON object. */
export function readWebhookInput(body: unknown): WebhookDraft {
  const raw = asJsonObject(body);
  const parsed = WebhookInputSchema.safeParse(raw);
  if (parsed.success) return { input: parsed.data, problems: [], parts: parsed.data };
  const shape = WebhookInputSchema.shape;
  return {
    input: null,
    problems: detailsOf(parsed.error),
    parts: {
      url: shape.url.safeParse(raw.url).data,
      headers: shape.headers.safeParse(raw.headers).data,
      query: shape.query.safeParse(raw.query).data,
    },
  };
}
