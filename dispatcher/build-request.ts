/**
 * Builds the HTTP request of one attempt: the job, the webhook's current
 * definition, the tenant's config variable values, the webhook secret and the
 * attempt's timestamp in; a DeliveryRequest (rendered URL, headers with the
 * Standard Webhooks signature, body) out. In two steps, so that what depends
 * only on the webhook and its variables (renderWebhook) and its signing keys
 * (signingKeysOf) can be kept from one attempt to the next: signedRequest adds
 * the job's body and the attempt's identity and signature headers. Pure.
 */
import type { DeliveryJob } from "../common/delivery-job.ts";
import type { SentRequest } from "../common/delivery-log/delivery-log.ts";
import { MissingVariablesError, renderTemplate, templateVariables } from "../common/template.ts";
import { NO_SECRETS, type Redactor } from "./redact-secrets.ts";
import { InvalidWebhookSecretError, signingKeyOf, signWithKey } from "./sign-payload.ts";
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
  /** Not to be changed: the attempts of one webhook definition may share it. */
  url: URL;
  /** Names in lower case; this attempt's own (a sender may not change them for the next). */
  headers: Readonly<Record<string, string>>;
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
 * What an attempt's request takes from its webhook definition and variable values: the same for
 * every attempt while neither changes.
 */
export interface RenderedWebhook {
  webhookId: string;
  /** Not to be changed: attempts share it. */
  url: URL;
  /** The webhook's own headers, rendered: names in lower case, values as `Headers` normalises them, reserved names left out. */
  headers: Readonly<Record<string, string>>;
  /** `host:port` of the URL: the unit of the per-endpoint concurrency limit. */
  endpoint: string;
  redactor: Redactor;
}

/**
 * Renders a webhook's URL and headers. Messages never quote rendered values, which may hold secrets.
 * @throws UndeliverableError `missing_variables` (naming every one), `invalid_url`, `invalid_header`.
 */
export function renderWebhook(
  webhook: RequestInput["webhook"],
  variables: ReadonlyMap<string, string>,
  redactor: Redactor = NO_SECRETS,
): RenderedWebhook {
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
  // Through Headers: it refuses what HTTP does not allow and normalises names and values.
  const checked = new Headers();
  for (const [name, template] of Object.entries(webhook.headers)) {
    if (RESERVED_HEADERS.has(name.toLowerCase())) continue;
    try {
      checked.set(name, renderTemplate(template, variables));
    } catch {
      throw new UndeliverableError(
        "invalid_header",
        `the webhook header ${name} does not render to a valid value`,
      );
    }
  }
  const port = url.port || (url.protocol === "https:" ? "443" : "80");
  return {
    webhookId: webhook.id,
    url,
    headers: Object.freeze(Object.fromEntries(checked)),
    endpoint: `${url.hostname}:${port}`,
    redactor,
  };
}

/** The HMAC keys an attempt signs with: the current secret's, then the previous one's while its grace lasts. */
export type SigningKeys = readonly Buffer[];

/**
 * The keys of `secret` and (when given) `previousSecret`, in signing order.
 * @throws UndeliverableError `invalid_secret`.
 */
export function signingKeysOf(secret: string, previousSecret?: string | null): SigningKeys {
  try {
    return previousSecret ? [signingKeyOf(secret), signingKeyOf(previousSecret)] : [signingKeyOf(secret)];
  } catch (error) {
    if (error instanceof InvalidWebhookSecretError)
      throw new UndeliverableError("invalid_secret", error.message);
    throw error;
  }
}

/** One attempt's request: `rendered` with the job's body and the attempt's identity and signature headers. */
export function signedRequest(
  rendered: RenderedWebhook,
  job: DeliveryJob,
  keys: SigningKeys,
  timestampSeconds: number,
): DeliveryRequest {
  const body = JSON.stringify(job.body);
  // Standard Webhooks: several space-separated signatures, any one of which verifies.
  const signature = keys.map((key) => signWithKey(key, job.deliveryId, timestampSeconds, body)).join(" ");
  const headers: Record<string, string> = {
    ...rendered.headers,
    "content-type": "application/json",
    "user-agent": USER_AGENT,
    "service-webhook-id": rendered.webhookId,
    "service-request-id": job.deliveryId,
    "webhook-id": job.deliveryId,
    "webhook-timestamp": String(timestampSeconds),
    "webhook-signature": signature,
  };
  return { url: rendered.url, headers, body, endpoint: rendered.endpoint, redactor: rendered.redactor };
}

/**
 * Renders and signs one attempt's request (renderWebhook, then signedRequest).
 * @throws UndeliverableError `missing_variables` (naming every one), `invalid_url`, `invalid_header`, `invalid_secret`.
 */
export function buildDeliveryRequest(input: RequestInput): DeliveryRequest {
  const rendered = renderWebhook(input.webhook, input.variables, input.redactor);
  const keys = signingKeysOf(input.secret, input.previousSecret);
  return signedRequest(rendered, input.job, keys, input.timestampSeconds);
}

/**
 * What the delivery log keeps of a request as it leaves: its URL and headers, through its redactor
 * (secret variables shown as `{{ NAME }}`; the signatures stay, they reveal no secret).
 */
export function sentRequestOf(request: DeliveryRequest): SentRequest {
  const { redactor } = request;
  if (redactor === NO_SECRETS) return { url: request.url.href, headers: request.headers };
  const headers: Record<string, string> = {};
  for (const name in request.headers) headers[name] = redactor.redact(request.headers[name] as string);
  return { url: redactor.redact(request.url.href), headers };
}
