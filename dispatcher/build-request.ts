/**
 * Builds the HTTP request of one attempt: the job, the webhook's current
 * definition, the tenant's config variable values, the webhook secret and the
 * attempt's timestamp in; a DeliveryRequest (rendered URL, headers with the
 * Standard Webhooks signature, body) out. Pure.
 */
import type { DeliveryJob } from "../common/delivery-job.ts";
import type { SentRequest } from "../common/delivery-log/delivery-log.ts";
import { MissingVariablesError, renderTemplate, templateVariables } from "../common/template.ts";
import { NO_SECRETS, type Redactor } from "./redact-secrets.ts";
import { InvalidWebhookSecretError, signPayload } from "./sign-payload.ts";
import { UndeliverableError } from "./undeliverable-error.ts";

/** Sent as `User-Agent` on every delivery. */
export const USER_AGENT = "tenant-data-service-webhooks/0.1";

/** Header names a webhook's own headers cannot set: ours (identity, signature) and the transport's. */
const RESERVED_HEADERS = new Set([
  "content-type",
  "content-length",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "upgrade",
  "te",
  "trailer",
  "expect",
  "host",
  "user-agent",
  "service-webhook-id",
  "service-request-id",
  "webhook-id",
  "webhook-timestamp",
  "webhook-signature",
]);

export interface DeliveryRequest {
  url: URL;
  headers: Headers;
  body: string;
  /** `host:port` of the URL: the unit of the per-endpoint concurrency limit. */
  endpoint: string;
  /**
   * Hides the secret values the URL and headers were rendered with: everything said about this
   * request (errors, the response excerpt, log lines) passes through it before it is kept or logged.
   */
  redactor: Redactor;
}

export interface RequestInput {
  job: DeliveryJob;
  /** The webhook's URL and header templates (`{{ NAME }}`). */
  webhook: { id: string; url: string; headers: Readonly<Record<string, string>> };
  /** Config variable values by key (secrets already opened). */
  variables: ReadonlyMap<string, string>;
  /** The webhook secret, `whsec_...`. */
  secret: string;
  /**
   * The secret before the last rotation, while its grace period lasts: the request is signed with
   * it too, after `secret` (receivers not yet given the new one still verify). Default: none.
   */
  previousSecret?: string | null;
  /** The attempt's `webhook-timestamp`, unix seconds. */
  timestampSeconds: number;
  /** Hides the values of the secret variables among `variables`. Default: none to hide. */
  redactor?: Redactor;
}

/** The config variable names a webhook definition refers to (URL and header values). */
export function variablesOf(webhook: RequestInput["webhook"]): string[] {
  return templateVariables([webhook.url, ...Object.values(webhook.headers)].join("\n"));
}

/**
 * Renders and signs one attempt's request. Messages never quote rendered
 * values, which may hold secrets.
 * @throws UndeliverableError `missing_variables` (naming every one), `invalid_url`, `invalid_header`, `invalid_secret`.
 */
export function buildDeliveryRequest(input: RequestInput): DeliveryRequest {
  const { job, webhook, variables } = input;
  const missing = variablesOf(webhook).filter((name) => !variables.has(name));
  if (missing.length > 0)
    throw new UndeliverableError("missing_variables", new MissingVariablesError(missing).message);

  let url: URL;
  try {
    url = new URL(renderTemplate(webhook.url, variables));
  } catch {
    throw new UndeliverableError(
      "invalid_url",
      `the webhook URL ${webhook.url} does not render to a valid URL`,
    );
  }
  const headers = new Headers();
  for (const [name, template] of Object.entries(webhook.headers)) {
    if (RESERVED_HEADERS.has(name.toLowerCase())) continue;
    try {
      headers.set(name, renderTemplate(template, variables));
    } catch {
      throw new UndeliverableError(
        "invalid_header",
        `the webhook header ${name} does not render to a valid value`,
      );
    }
  }

  const body = JSON.stringify(job.body);
  let signature: string;
  try {
    signature = signPayload(input.secret, job.deliveryId, input.timestampSeconds, body);
    // Standard Webhooks: several space-separated signatures, any one of which verifies.
    if (input.previousSecret)
      signature += ` ${signPayload(input.previousSecret, job.deliveryId, input.timestampSeconds, body)}`;
  } catch (error) {
    if (error instanceof InvalidWebhookSecretError)
      throw new UndeliverableError("invalid_secret", error.message);
    throw error;
  }
  headers.set("content-type", "application/json");
  headers.set("user-agent", USER_AGENT);
  headers.set("service-webhook-id", webhook.id);
  headers.set("service-request-id", job.deliveryId);
  headers.set("webhook-id", job.deliveryId);
  headers.set("webhook-timestamp", String(input.timestampSeconds));
  headers.set("webhook-signature", signature);

  const port = url.port || (url.protocol === "https:" ? "443" : "80");
  return { url, headers, body, endpoint: `${url.hostname}:${port}`, redactor: input.redactor ?? NO_SECRETS };
}

/**
 * What the delivery log keeps of a request as it leaves: its URL and headers, through its redactor
 * (secret variables shown as `{{ NAME }}`; the signatures stay, they reveal no secret).
 */
export function sentRequestOf(request: DeliveryRequest): SentRequest {
  const { redactor } = request;
  const headers: Record<string, string> = {};
  for (const [name, value] of request.headers) headers[name] = redactor.redact(value);
  return { url: redactor.redact(request.url.href), headers };
}
