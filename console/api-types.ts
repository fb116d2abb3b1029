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
  mutationId: string;
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
