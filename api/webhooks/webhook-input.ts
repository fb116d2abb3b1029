/** The body of `POST /webhooks` and `PUT /webhooks/{id}` (SPEC.md §7), checked at the trust boundary. */
import { z } from "zod";

/** Headers the service sets itself; a webhook may not override them. */
const RESERVED_HEADERS =
  /^(content-type|content-length|host|user-agent|connection|transfer-encoding|webhook-.*|service-.*)$/i;

export const WebhookInputSchema = z.object({
  name: z.string().trim().min(1).max(255),
  url: z.string().min(1).max(2048),
  type: z.literal("graphql"),
  query: z.string().min(1).max(65_536),
  headers: z
    .record(
      z
        .string()
        .regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, "not a valid header name")
        .refine((name) => !RESERVED_HEADERS.test(name), "set by the service; cannot be overridden"),
      z
        .string()
        .max(4096)
        .refine((value) => !/[\r\n\0]/.test(value), "must not contain line breaks"),
    )
    .refine((headers) => Object.keys(headers).length <= 50, "at most 50 headers")
    .default({}),
});

export type WebhookInput = z.infer<typeof WebhookInputSchema>;
