/** The shapes of the REST answers the console reads (README: webhooks, deliveries, custom objects, whoami). */

export interface Whoami {
  username: string;
  userId: string;
  tenantId: string;
  roles: string[];
  expiresAt: string | null;
}

export interface Webhook {
  id: string;
  name: string;
  url: string;
  type: string;
  query: string;
  enabled: boolean;
  disabledReason: string | null;
  createdAt: string;
  updatedAt: string;
}

export type DeliveryStatus = "pending" | "delivering" | "succeeded" | "failed";

export interface DeliveryAttempt {
  attempt: number;
  at: string;
  durationMs: number;
  statusCode: number | null;
  responseBody: string | null;
  error: string | null;
}

export interface Delivery {
  id: string;
  webhookId: string;
  /** The event the delivery reports: a mutation's id, `deferred:<uid>:<dueMs>`, `tick:<ms>` or `test:<id>`. */
  eventId: string;
  /** The mutation's id for a mutation's delivery; null for a deferred firing, a tick or a test. */
  mutationId: string | null;
  part: number;
  status: DeliveryStatus;
  attemptCount: number;
  committedAt: string;
  createdAt: string;
  updatedAt: string;
  attempts: DeliveryAttempt[];
}

export interface CustomField {
  id: string;
  name: string;
  label: string | null;
  description: string | null;
  fieldType: string;
  referenceSchemaName: string | null;
  required: boolean;
  upsertKey: boolean;
  readOnly: boolean;
  maxLength: number | null;
  precision: number | null;
  scale: number | null;
}

export interface CustomObject {
  schema: { id: string; name: string; label: string | null; description: string | null };
  fields: CustomField[];
}
