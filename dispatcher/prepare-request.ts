/**
 * An attempt's request from a webhook definition: the job and the webhook as
 * the delivery log last read it in, the DeliveryRequest (rendered with the
 * tenant's config variables as they are now, signed) out. Opened secrets and
 * redactors are kept in memory, since every attempt would otherwise repeat
 * the same work.
 */
import { setNewest } from "../common/bounded-map.ts";
import type { DeliveryJob } from "../common/delivery-job.ts";
import type { DeliveryStore, DeliveryWebhook } from "../common/delivery-log/delivery-store.ts";
import { configSecretContext, type SecretBox, webhookSecretContext } from "../common/secret-box.ts";
import { NOT_YET, valueNow } from "../common/settled.ts";
import { buildDeliveryRequest, type DeliveryRequest, variablesOf } from "./build-request.ts";
import { createRedactor, NO_SECRETS, type Redactor } from "./redact-secrets.ts";
import { UndeliverableError } from "./undeliverable-error.ts";

/** Opened secrets kept in memory (webhook secrets and secret variables), least recently added out first. */
const OPENED_SECRETS = 1024;

/** Redactors kept in memory, one per set of secret values a webhook renders; least recently added out first. */
const KEPT_REDACTORS = 1024;

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

  return async (job, webhook) => {
    if (!webhook) throw new UndeliverableError("webhook_deleted", "the webhook was deleted");
    if (!webhook.enabled) {
      const why = webhook.disabledReason ? `: ${webhook.disabledReason}` : "";
      throw new UndeliverableError("webhook_disabled", `the webhook is disabled${why}`);
    }
    const finding = store.findVariables(job.tenantId, variablesOf(webhook));
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
    const secretContext = webhookSecretContext(job.tenantId, webhook.id);
    const previous = webhook.previousSealedSecret;
    const inGrace = previous !== null && (webhook.previousSecretUntil ?? 0) > now();
    return buildDeliveryRequest({
      job,
      webhook,
      variables,
      secret: open(webhook.sealedSecret, secretContext),
      previousSecret: inGrace ? open(previous, secretContext) : null,
      timestampSeconds: Math.floor(now() / 1000),
      redactor: redactorOf(secrets),
    });
  };
}
