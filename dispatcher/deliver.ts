/**
 * One delivery attempt, end to end: a DeliveryJob in, a DeliveryDecision (what
 * the queue should do with the job) out. Builds and signs the request from the
 * webhook as last read (checked current as the attempt is logged) and the
 * variables as they are now, takes a per-endpoint slot, sends, classifies the
 * answer, applies the retry policy and writes the delivery log.
 * What it logs and records about a sent request passes through the request's
 * redactor: secret config variable values never reach the log or the API.
 */
import { setNewest } from "../common/bounded-map.ts";
import type { DeliveryJob } from "../common/delivery-job.ts";
import type { AttemptRecord } from "../common/delivery-log/delivery-log.ts";
import type { DeliveryStore, DeliveryWebhook } from "../common/delivery-log/delivery-store.ts";
import type { Logger } from "../common/log.ts";
import type { SecretBox } from "../common/secret-box.ts";
import { NOT_YET, valueNow } from "../common/settled.ts";
import { type DeliveryRequest, sentRequestOf } from "./build-request.ts";
import { createBusyParking, type ParkingRules } from "./busy-parking.ts";
import { classifyResponse } from "./classify-response.ts";
import { type DeliveryOutcome, decideOutcome, maxAttempts, type RetryPolicy } from "./decide-outcome.ts";
import { type DeliveryMetrics, NO_DELIVERY_METRICS } from "./delivery-metrics.ts";
import type { EndpointLease, EndpointLimiter } from "./endpoint-limiter.ts";
import type { AttemptResult, SendDelivery } from "./http-sender.ts";
import { createRequestPreparer } from "./prepare-request.ts";
import { NO_SECRETS, type Redactor } from "./redact-secrets.ts";
import { UndeliverableError } from "./undeliverable-error.ts";

/** What the queue does with the job after `deliver`. */
export type DeliveryDecision =
  | DeliveryOutcome
  /** The endpoint is at its concurrency limit: try again after `delayMs`; no attempt was made. */
  | { kind: "busy"; delayMs: number }
  /** The attempt was interrupted by shutdown: put the job back; it does not count against the retry budget. */
  | { kind: "handed-back" }
  /** The delivery log says this delivery is already finished: a duplicate job, dropped without sending. */
  | { kind: "skipped" };

export interface DeliveryContext {
  /** This job's attempt number, 1-based: what the retry budget counts. */
  attempt: number;
  /** Aborted when the dispatcher shuts down past its grace period. */
  signal?: AbortSignal;
  /**
   * Called when the attempt has waited a while for its endpoint's answer (the sender's onSlow: it
   * then waits on a slow endpoint rather than works); what it returns is called once the answer is in.
   */
  onSlow?: () => () => void;
}

export type Deliver = (job: DeliveryJob, context: DeliveryContext) => Promise<DeliveryDecision>;

export interface DelivererDeps {
  store: DeliveryStore;
  box: SecretBox;
  limiter: EndpointLimiter;
  send: SendDelivery;
  log: Logger;
  retry: RetryPolicy;
  /** Longest Retry-After honoured. */
  maxRetryAfterMs: number;
  /** How long jobs refused at an endpoint at its limit wait before trying again. */
  busy: ParkingRules;
  /** Where attempts and disabled webhooks are counted. Default: nowhere. */
  metrics?: DeliveryMetrics;
  now?: () => number;
  random?: () => number;
}

/** Webhook definitions kept in memory (see createDeliverer); beyond this many, the one read longest ago is dropped. */
const KEPT_WEBHOOKS = 1024;

/**
 * Reads of a webhook's definition one attempt makes at most: each read after the first follows a
 * change of the webhook between its read and the attempt's logging. Past it, an internal error (retried).
 */
const WEBHOOK_READS = 3;

/** Longest wait, inside an attempt, for a slot this process holds at a busy endpoint (then the job is parked). */
const SLOT_WAIT_MS = 100;

const statusAfter = (outcome: DeliveryOutcome) =>
  outcome.kind === "succeeded" ? "succeeded" : outcome.kind === "failed" ? "failed" : "pending";

/** `outcome` with its reason (logged, recorded, kept by the queue) passed through `redactor`. */
const redactReason = (outcome: DeliveryOutcome, redactor: Redactor): DeliveryOutcome =>
  outcome.kind === "succeeded" || redactor === NO_SECRETS
    ? outcome
    : { ...outcome, reason: redactor.redact(outcome.reason) };

/** Creates the delivery function the worker runs for each job. */
export function createDeliverer(deps: DelivererDeps): Deliver {
  const { store, box, limiter, send, retry, now = Date.now, random = Math.random } = deps;
  const metrics = deps.metrics ?? NO_DELIVERY_METRICS;
  const parking = createBusyParking(deps.busy, now, random);

  // An unreleased lease expires by itself; failing the delivery over it would resend a finished POST.
  const release = (lease: EndpointLease) =>
    lease.release().catch((error) => deps.log.warn("endpoint lease not released", { error: String(error) }));

  const prepare = createRequestPreparer({ store, box, now });

  // Webhook definitions by tenant and id, as last read: an attempt builds its request from the one
  // kept here, and the store checks, as it logs the attempt as started, that the webhook is still at
  // that version (versions only grow, ids are never reused), so the request that leaves was built from
  // the webhook as it is at that commit. Only a webhook not kept here, or moved on since, is read.
  const webhooks = new Map<string, DeliveryWebhook>();
  const webhookKey = (job: DeliveryJob) => `${job.tenantId}\u0000${job.webhookId}`;

  /**
   * Logs the attempt and the status it leaves the delivery in: into its row `started` when it was
   * logged as started (null: the log has no such delivery), else as a new row (nothing was sent).
   */
  async function record(
    job: DeliveryJob,
    attempt: AttemptRecord,
    outcome: DeliveryOutcome,
    started?: number | null,
  ): Promise<void> {
    if (outcome.kind === "failed" && outcome.disableEndpoint) {
      await store.disableWebhook(job.tenantId, job.webhookId, outcome.reason, now());
    }
    const status = statusAfter(outcome);
    let number: number | null;
    if (started === undefined)
      number = await store.recordAttempt(job.tenantId, job.deliveryId, attempt, status);
    else {
      number = started;
      if (number !== null) await store.finishAttempt(job.tenantId, job.deliveryId, number, attempt, status);
    }
    // Counted once in the delivery log, so the figures and the log agree.
    metrics.attempted(outcome.kind, attempt.durationMs);
    if (outcome.kind === "failed" && outcome.disableEndpoint) metrics.webhookDisabled();
    const fields = {
      tenantId: job.tenantId,
      webhookId: job.webhookId,
      deliveryId: job.deliveryId,
      attempt: number,
      statusCode: attempt.statusCode,
      durationMs: attempt.durationMs,
    };
    // Every attempt is in the delivery log; a line per success would only repeat it (and cost ~10% of a delivery).
    if (outcome.kind === "succeeded") deps.log.debug("delivered", fields);
    else if (outcome.kind === "retry")
      deps.log.info("delivery will be retried", {
        ...fields,
        reason: outcome.reason,
        delayMs: outcome.delayMs,
      });
    else
      deps.log.warn("delivery failed", {
        ...fields,
        reason: outcome.reason,
        endpointDisabled: outcome.disableEndpoint,
      });
    if (number === null) deps.log.warn("delivery not in the delivery log", fields);
  }

  const dropFinished = (job: DeliveryJob, status: string): DeliveryDecision => {
    deps.log.info("finished delivery's job dropped", {
      tenantId: job.tenantId,
      deliveryId: job.deliveryId,
      status,
    });
    return { kind: "skipped" };
  };

  /**
   * Logs the attempt as started, sends within the endpoint slot `lease` — freed as soon as the answer
   * is in (logging it needs no slot) — and logs the outcome. Null, with nothing sent: `webhook` (the
   * definition `request` was built from) is no longer the current one.
   */
  async function sendAndDecide(
    job: DeliveryJob,
    webhook: DeliveryWebhook,
    request: DeliveryRequest,
    context: DeliveryContext,
    lease: EndpointLease,
  ): Promise<DeliveryDecision | null> {
    // Committed before the request leaves: a dispatcher killed while the receiver holds the request
    // leaves this attempt in the log, in flight, for the delivery's next attempt to close as unknown.
    let started: number | null;
    try {
      const start = await store.startAttempt({
        tenantId: job.tenantId,
        deliveryId: job.deliveryId,
        webhookId: job.webhookId,
        webhookVersion: webhook.version,
        startedAt: now(),
        request: sentRequestOf(request),
      });
      if (start.kind !== "started" && start.kind !== "unlogged") {
        void release(lease);
        return start.kind === "finished" ? dropFinished(job, start.status) : null;
      }
      started = start.kind === "started" ? start.number : null;
    } catch (error) {
      void release(lease);
      throw error;
    }
    let result: AttemptResult;
    let slowEnded: (() => void) | undefined;
    const { onSlow } = context;
    try {
      result = await send(
        request,
        context.signal,
        onSlow &&
          (() => {
            slowEnded = onSlow();
          }),
      );
    } finally {
      slowEnded?.();
      // Not awaited: nothing below needs the slot back (a lingering slot is back within the call anyway).
      void release(lease);
    }
    const attempt = (error: string | null): AttemptRecord => ({
      startedAt: result.startedAt,
      durationMs: result.durationMs,
      statusCode: result.status,
      responseBody: result.responseBody,
      error,
    });
    if (result.interrupted) {
      const error = "interrupted: the dispatcher shut down; handed back for a later attempt";
      if (started !== null)
        await store.finishAttempt(job.tenantId, job.deliveryId, started, attempt(error), "pending");
      return { kind: "handed-back" };
    }
    const classified = classifyResponse(result.status, result.headers, result.error, {
      now: now(),
      maxRetryAfterMs: deps.maxRetryAfterMs,
    });
    // The sender redacted its own texts; a reason may also quote the answer's headers (a redirect's Location).
    const outcome = redactReason(
      decideOutcome(classified, context.attempt, retry, random()),
      request.redactor,
    );
    // A failed attempt's error says why in words (redirect, Retry-After, giving up), not only the status code.
    await record(job, attempt(outcome.kind === "succeeded" ? null : outcome.reason), outcome, started);
    return outcome;
  }

  /**
   * One try at an attempt, from the webhook definition `kept` here (undefined: read it now with the
   * delivery's status). Null, with nothing sent or logged: that definition turned out not to be the
   * current one, and the next try reads it.
   */
  async function attemptWith(
    job: DeliveryJob,
    context: DeliveryContext,
    kept: DeliveryWebhook | undefined,
  ): Promise<DeliveryDecision | null> {
    // Each step below reads an already-settled promise at once when the store answered within the call
    // (valueNow): an `await` would queue the rest of the attempt behind every other delivery's.
    let webhook: DeliveryWebhook | null | undefined = kept;
    if (webhook === undefined) {
      const loading = store.loadDelivery(job.tenantId, job.deliveryId, job.webhookId);
      let state = valueNow(loading);
      if (state === NOT_YET) state = await loading;
      if (state.status === "succeeded" || state.status === "failed") return dropFinished(job, state.status);
      webhook = state.webhook;
      // Shared by every attempt until it changes: frozen, so that none can alter it for the others.
      if (webhook) setNewest(webhooks, webhookKey(job), Object.freeze(webhook), KEPT_WEBHOOKS);
    }
    const startedAt = now();
    let request: DeliveryRequest;
    try {
      const preparing = prepare(job, webhook);
      const prepared = valueNow(preparing);
      request = prepared === NOT_YET ? await preparing : prepared;
    } catch (error) {
      // A kept definition may be out of date (disabled, since enabled again): fail only over the current one.
      if (kept) return null;
      // Internal errors (store, secrets) are retried by the worker; on the last attempt the log says why it ended.
      const internal = !(error instanceof UndeliverableError);
      if (internal && context.attempt < maxAttempts(retry)) throw error;
      const reason = internal ? `internal error: ${(error as Error).message}` : (error as Error).message;
      const outcome: DeliveryOutcome = { kind: "failed", reason, disableEndpoint: false };
      await record(
        job,
        { startedAt, durationMs: 0, statusCode: null, responseBody: null, error: reason },
        outcome,
      );
      return outcome;
    }
    // A fast endpoint frees a slot within milliseconds: wait for it here rather than park the job for a second.
    const acquiring = limiter.acquire(request.endpoint, Math.min(deps.busy.busyDelayMs, SLOT_WAIT_MS));
    let lease = valueNow(acquiring);
    if (lease === NOT_YET) lease = await acquiring;
    if (!lease) {
      return { kind: "busy", delayMs: parking.park(request.endpoint, limiter.heldFor(request.endpoint)) };
    }
    // A request was built, so there was a webhook to build it from. Awaited here: an async function
    // returning another's promise takes two more turns of the queue to settle.
    return await sendAndDecide(job, webhook as DeliveryWebhook, request, context, lease);
  }

  return async (job, context) => {
    let decision = await attemptWith(job, context, webhooks.get(webhookKey(job)));
    for (let reads = 1; decision === null; reads++) {
      webhooks.delete(webhookKey(job));
      if (reads >= WEBHOOK_READS)
        throw new Error("the webhook kept changing while its attempt was being logged");
      decision = await attemptWith(job, context, undefined);
    }
    return decision;
  };
}
