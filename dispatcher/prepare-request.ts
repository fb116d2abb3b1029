/**
 * An attempt's request from a webhook definition: the job and the webhook as
 * the delivery log last read it in, the DeliveryRequest (rendered with the
 * tenant's config variables as they are now, signed) out. What depends only on
 * the definition is kept with it, since every attempt would otherwise repeat
 * the same work: its signing keys, and its rendered URL and headers when they
 * name no variable (variables are read at every attempt: they change without
 * the webhook's version moving). Opened secrets and redactors are kept too.
 */
import { setNewest } from "../common/bounded-map.ts";
import type { DeliveryJob } from "../common/delivery-job.ts";
import type { DeliveryStore, DeliveryWebhook } from "../common/delivery-log/delivery-store.ts";
import { configSecretContext, type SecretBox, webhookSecretContext } from "../common/secret-box.ts";
import { NOT_YET, valueNow } from "../common/settled.ts";
import {
  type DeliveryRequest,
  type RenderedWebhook,
  renderWebhook,
  type SigningKeys,
  signedRequest,
  signingKeysOf,
  variablesOf,
} from "./build-request.ts";
import { createRedactor, NO_SECRETS, type Redactor } from "./redact-secrets.ts";
import { UndeliverableError } from "./undeliverable-error.ts";

/** Opened secrets kept in memory (webhook secrets and secret variables), least recently added out first. */
const OPENED_SECRETS = 1024;

/** Redactors kept in memory, one per set of secret values a webhook renders; least recently added out first. */
const KEPT_REDACTORS = 1024;

/** What is kept of a webhook definition: its variables, its rendering when it names none, its signing keys once needed. */
interface PreparedWebhook {
  variables: string[];
  rendered: RenderedWebhook | null;
  /** The current secret's key. */
  keys?: SigningKeys;
  /** The current secret's, then the previous one's, once an attempt in its grace period needed them. */
  keysInGrace?: SigningKeys;
}

/**
 * Builds an attempt's request; the promise is already settled when no variable had to be read.
 * @throws UndeliverableError when the webhook is deleted (null) or disabled, or its request cannot be
 * built (buildDeliveryRequest's); any other error (store, secrets) is internal.
 */
export type PrepareRequest = (job: DeliveryJob, webhook: DeliveryWebhook | null) => Promise<DeliveryRequest>;

/** Creates the preparer over the store's config variables, opening secrets with `box`. */
export function createRequestPreparer(deps: {
  store: Pick<DeliveryStore, "findVariables">;
  box: SecretBox;
  now: () => number;
}): PrepareRequest {
  const { store, box, now } = deps;

  // Opened secrets by sealed text and context: opening (AES-GCM) every attempt would repeat the same work.
  const opened = new Map<string, string>();
  const open = (sealed: string, context: string) => {
    const key = `${context}\u0000${sealed}`;
    let secret = opened.get(key);
    if (secret === undefined) {
      secret = box.open(sealed, context);
      setNewest(opened, key, secret, OPENED_SECRETS);
    }
    return secret;
  };

  // Redactors by the secret values they hide: building one (a pattern over every form of each value)
  // every attempt would repeat the same work.
  const redactors = new Map<string, Redactor>();
  const redactorOf = (secrets: ReadonlyMap<string, string>) => {
    if (secrets.size === 0) return NO_SECRETS;
    const key = [...secrets].map(([name, value]) => `${name}\u0000${value}`).join("\u0001");
    let redactor = redactors.get(key);
    if (redactor === undefined) {
      redactor = createRedactor(secrets);
      setNewest(redactors, key, redactor, KEPT_REDACTORS);
    }
    return redactor;
  };

  // By definition: a webhook changed is another object (see deliver.ts), so a definition's entry goes with it.
  const prepared = new WeakMap<DeliveryWebhook, PreparedWebhook>();
  const prepare = (webhook: DeliveryWebhook): PreparedWebhook => {
    let kept = prepared.get(webhook);
    if (kept) return kept;
    const variables = variablesOf(webhook);
    kept = { variables, rendered: variables.length === 0 ? renderWebhook(webhook, new Map()) : null };
    prepared.set(webhook, kept);
    return kept;
  };

  const secretContextOf = (webhook: DeliveryWebhook) => webhookSecretContext(webhook.tenantId, webhook.id);

  /** The keys to sign with now (the previous secret's too while its grace lasts); opened once per definition. */
  const keysNow = (webhook: DeliveryWebhook, kept: PreparedWebhook): SigningKeys => {
    const previous = webhook.previousSealedSecret;
    if (previous === null || (webhook.previousSecretUntil ?? 0) <= now()) {
      kept.keys ??= signingKeysOf(open(webhook.sealedSecret, secretContextOf(webhook)));
      return kept.keys;
    }
    const context = secretContextOf(webhook);
    kept.keysInGrace ??= signingKeysOf(open(webhook.sealedSecret, context), open(previous, context));
    return kept.keysInGrace;
  };

  /** The definition rendered with the tenant's variables as they are now (opened, and hidden by its redactor when secret). */
  const renderWithVariables = async (job: DeliveryJob, webhook: DeliveryWebhook, names: string[]) => {
    const finding = store.findVariables(job.tenantId, names);
    let stored = valueNow(finding);
    if (stored === NOT_YET) stored = await finding;
    const variables = new Map<string, string>();
    const secrets = new Map<string, string>();
    for (const v of stored) {
      if (v.configType !== "secret") variables.set(v.key, v.value);
      else {
        const value = open(v.value, configSecretContext(job.tenantId, v.key));
        variables.set(v.key, value);
        secrets.set(v.key, value);
      }
    }
    return renderWebhook(webhook, variables, redactorOf(secrets));
  };

  return async (job, webhook) => {
    if (!webhook) throw new UndeliverableError("webhook_deleted", "the webhook was deleted");
    if (!webhook.enabled) {
      const why = webhook.disabledReason ? `: ${webhook.disabledReason}` : "";
      throw new UndeliverableError("webhook_disabled", `the webhook is disabled${why}`);
    }
    const kept = prepare(webhook);
    let rendered = kept.rendered;
    if (rendered === null) {
      const rendering = renderWithVariables(job, webhook, kept.variables);
      const settled = valueNow(rendering);
      rendered = settled === NOT_YET ? await rendering : settled;
    }
    return signedRequest(rendered, job, keysNow(webhook, kept), Math.floor(now() / 1000));
  };
}
