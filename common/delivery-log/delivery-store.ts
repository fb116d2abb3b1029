/**
 * The dispatcher's port over the store: the delivery log's attempts it writes
 * (contract in delivery-log.ts), read beside what an attempt starts from (the
 * delivery's status, its webhook as it is now, the tenant's config variables),
 * and the one webhook write it makes (disabling on 410 Gone). An attempt may
 * be built from a webhook definition read earlier: logging it as started
 * checks, in the same transaction, that the webhook is still at that version
 * and the delivery still unfinished. Each engine
 * implements it once, over the tables its migrations define
 * (SQLite: sqlite/sqlite-delivery-store.ts); open-delivery-store.ts opens it.
 */
import type { ConfigType } from "../template.ts";
import type { AttemptRecord, DeliveryStatus, SentRequest } from "./delivery-log.ts";

/** A webhook as a delivery needs it. `sealedSecret` is still sealed for `webhookSecretContext`. */
export interface DeliveryWebhook {
  tenantId: string;
  id: string;
  url: string;
  headers: Record<string, string>;
  sealedSecret: string;
  /** The secret before the last rotation, sealed the same way; it signs too until `previousSecretUntil` (ms). */
  previousSealedSecret: string | null;
  previousSecretUntil: number | null;
  enabled: boolean;
  disabledReason: string | null;
  /** Counts the webhook's changes (any edit, rotation, disabling moves it on): a definition read at a version stays current until it moves. */
  version: number;
}

/** A config variable; a `secret` one's value is sealed for `configSecretContext`. */
export interface StoredVariable {
  key: string;
  configType: ConfigType;
  value: string;
}

/** What an attempt starts from, read together: where the delivery stands and its webhook as it is now. */
export interface DeliveryState {
  /** The delivery's status in the log; null when the log has no such delivery. */
  status: DeliveryStatus | null;
  /** The webhook's current definition; null when it was deleted. */
  webhook: DeliveryWebhook | null;
}

/** Where an attempt about to be sent is logged, or why it is not (then nothing was written). */
export type AttemptStart =
  /** Logged, in flight, as attempt `number`. */
  | { kind: "started"; number: number }
  /** The log has no such delivery: nothing to log it in. */
  | { kind: "unlogged" }
  /** The delivery is finished already (a duplicate job): its request is not to be sent. */
  | { kind: "finished"; status: "succeeded" | "failed" }
  /** The webhook was changed (or deleted) since the version the request was built from. */
  | { kind: "webhook-changed" };

/** The attempt startAttempt logs: its delivery, the webhook version its request was built from, and that request. */
export interface AttemptToStart {
  tenantId: string;
  deliveryId: string;
  webhookId: string;
  webhookVersion: number;
  startedAt: number;
  /** What the attempt sends, already redacted. */
  request: SentRequest;
}

export interface DeliveryStore {
  /** The delivery's status and its webhook's current definition, read together. */
  loadDelivery(tenantId: string, deliveryId: string, webhookId: string): Promise<DeliveryState>;
  /** The tenant's variables among `keys` (absent ones are simply not returned). */
  findVariables(tenantId: string, keys: readonly string[]): Promise<StoredVariable[]>;
  /**
   * Logs an attempt whose request is about to leave, before it does, with its request: numbered
   * after the ones logged so far, counted, in flight (error IN_FLIGHT_ERROR, no status code,
   * duration 0), and the delivery `delivering`. Attempts of the delivery still in flight — left by
   * a dispatcher that stopped — are closed with OUTCOME_UNKNOWN_ERROR in the same transaction.
   * Nothing is written, and the result says why, when the webhook is no longer at
   * `webhookVersion` (or deleted), the delivery is finished, or the log has no such delivery.
   * Resolves once committed, so that every request that leaves is in the log.
   */
  startAttempt(attempt: AttemptToStart): Promise<AttemptStart>;
  /**
   * Fills in the outcome of started attempt `number` (no longer in flight, even if closed as
   * unknown meanwhile) and sets the delivery's status, in one transaction.
   */
  finishAttempt(
    tenantId: string,
    deliveryId: string,
    number: number,
    attempt: AttemptRecord,
    status: Exclude<DeliveryStatus, "delivering">,
  ): Promise<void>;
  /**
   * Appends a finished attempt that sent nothing (the request could not be built), counts it and
   * sets the delivery's status, closing attempts left in flight as startAttempt does, all in one
   * transaction. Returns the attempt's number, or null when the log has no such delivery (nothing is written).
   */
  recordAttempt(
    tenantId: string,
    deliveryId: string,
    attempt: AttemptRecord,
    status: Exclude<DeliveryStatus, "delivering">,
  ): Promise<number | null>;
  /**
   * Disables the webhook with a reason shown to administrators, and `at` as when it was disabled,
   * in one transaction: its version
   * grows and so does its tenant's webhook set version (as any webhook write moves it), so the
   * API's change feed stops matching it. A missing webhook is no error.
   */
  disableWebhook(tenantId: string, webhookId: string, reason: string, at: number): Promise<void>;
  close(): Promise<void>;
}
