/**
 * What the dispatcher needs of the store (the port; the SQLite adapter is in
 * store/sqlite/): the current webhook definition and config variables, read at
 * delivery time, and the delivery log it writes. Tables and their meaning are
 * owned by the API's migrations (webhooks, config_variables, deliveries,
 * delivery_attempts).
 */

/** A webhook as a delivery needs it. `sealedSecret` is still sealed for `webhookSecretContext`. */
export interface DeliveryWebhook {
  tenantId: string;
  id: string;
  url: string;
  headers: Record<string, string>;
  sealedSecret: string;
  enabled: boolean;
  disabledReason: string | null;
}

/** A config variable; a `secret` one's value is sealed for `configSecretContext`. */
export interface StoredVariable {
  key: string;
  configType: "plain-text" | "secret";
  value: string;
}

export type DeliveryStatus = "pending" | "delivering" | "succeeded" | "failed";

/** One attempt for the delivery log. */
export interface AttemptRecord {
  startedAt: number;
  durationMs: number;
  statusCode: number | null;
  /** First 1 KB of the answer's body. */
  responseBody: string | null;
  error: string | null;
}

/** What an attempt starts from, read together: where the delivery stands and its webhook as it is now. */
export interface DeliveryState {
  /** The delivery's status in the log; null when the log has no such delivery. */
  status: DeliveryStatus | null;
  /** The webhook's current definition; null when it was deleted. */
  webhook: DeliveryWebhook | null;
}

export interface DeliveryStore {
  /** The delivery's status and its webhook's current definition, read together. */
  loadDelivery(tenantId: string, deliveryId: string, webhookId: string): Promise<DeliveryState>;
  /** The tenant's variables among `keys` (absent ones are simply not returned). */
  findVariables(tenantId: string, keys: readonly string[]): Promise<StoredVariable[]>;
  /** Sets the delivery `delivering` (unless it is already final). */
  markDelivering(tenantId: string, deliveryId: string, at: number): Promise<void>;
  /**
   * Appends an attempt (numbered after the ones logged so far), counts it and
   * sets the delivery's status, all in one transaction. Returns the attempt's
   * number, or null when the log has no such delivery (nothing is written).
   */
  recordAttempt(
    tenantId: string,
    deliveryId: string,
    attempt: AttemptRecord,
    status: Exclude<DeliveryStatus, "delivering">,
  ): Promise<number | null>;
  /** Disables the webhook with a reason shown to administrators. */
  disableWebhook(tenantId: string, webhookId: string, reason: string, at: number): Promise<void>;
  close(): Promise<void>;
}
