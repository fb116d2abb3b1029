/**
 * The matcher: the change entries of one committed mutation × the tenant's
 * subscriptions → delivery jobs, one per webhook with at least one matching
 * change, its body the elements in mutation order (SPEC.md §8, seed §6.2).
 * Pure: lookups for filters come in through the evaluation context.
 */
import { type DeliveryJob, deliveryIdOf } from "../../common/delivery-job.ts";
import { type EvaluationContext, evaluateExtendedFilter, evaluateFilter } from "../eql/evaluate-filter.ts";
import type { FieldDef } from "../model/catalogue.ts";
import { type FieldValue, type LoggedChange, type RecordValues, sameValue } from "../model/record-values.ts";
import type { Subscription } from "./subscription.ts";

export interface CompiledWebhook {
  webhookId: string;
  subscription: Subscription;
}

/** A tenant's enabled webhooks, compiled (api/webhooks/webhook-compiler.ts keeps them per version). */
export interface CompiledWebhookSource {
  forTenant(tenantId: string): Promise<CompiledWebhook[]>;
}

export interface MatchContext extends EvaluationContext {
  /** Custom objects fire only while tracked. */
  isTracked(objectName: string): boolean;
}

/** @param changes the entries of one mutation, in their order within it. */
export function matchChanges(
  changes: readonly LoggedChange[],
  webhooks: readonly CompiledWebhook[],
  context: MatchContext,
): DeliveryJob[] {
  const first = changes[0];
  if (!first) return [];
  const jobs: DeliveryJob[] = [];
  for (const { webhookId, subscription } of webhooks) {
    const body = changes
      .filter((change) => fires(subscription, change, context))
      .map((change) => shapeElement(subscription, change));
    if (body.length === 0) continue;
    jobs.push({
      tenantId: first.tenantId,
      webhookId,
      mutationId: first.mutationId,
      deliveryId: deliveryIdOf(webhookId, first.mutationId, first.committedAt),
      body,
      committedAt: first.committedAt,
    });
  }
  return jobs;
}

function fires(subscription: Subscription, change: LoggedChange, context: MatchContext): boolean {
  if (change.objectName !== subscription.object.name || !context.isTracked(change.objectName)) return false;
  if (subscription.operations && !subscription.operations.has(change.operation)) return false;
  if (change.operation === "UPDATE" && subscription.watched.length > 0) {
    const changed = subscription.watched.some(
      (field) => !sameValue(change.before?.[field] ?? null, change.after?.[field] ?? null),
    );
    if (!changed) return false;
  }
  const values = (change.after ?? change.before) as RecordValues;
  if (subscription.filter && !evaluateFilter(subscription.filter, values, context)) return false;
  if (subscription.extendedFilter) {
    const values = { current: change.after, previous: change.before, operation: change.operation };
    if (!evaluateExtendedFilter(subscription.extendedFilter, values, context)) return false;
  }
  return true;
}

/** `{"data":{"schemaX":{...members in the order selected}}}`. INSERT: previous = data; DELETE: both the last values. */
function shapeElement(subscription: Subscription, change: LoggedChange): unknown {
  const data = (change.after ?? change.before) as RecordValues;
  const previous = change.operation === "UPDATE" ? (change.before as RecordValues) : data;
  const fieldsByName = new Map(subscription.object.fields.map((field) => [field.name, field]));
  const event: Record<string, unknown> = {};
  for (const member of subscription.members) {
    if (member.kind === "operation") event[member.key] = change.operation;
    else if (member.kind === "timestamp") event[member.key] = new Date(change.committedAt).toISOString();
    else if (member.kind === "data" || member.kind === "previous") {
      const values = member.kind === "data" ? data : previous;

      event[member.key] = Object.fromEntries(
        member.fields.map(({ key, field }) => [
          key,
          wireValue(fieldsByName.get(field), values[field] ?? null),
        ]),
      );
    }
  }
  return { data: { [subscription.rootKey]: event } };
}

/** A stored value as GraphQL would serialize it (instants as ISO strings with milliseconds). */
function wireValue(field: FieldDef | undefined, value: FieldValue): FieldValue {
  if (value === null || !field) return value;
  return field.type === "datetime" && typeof value === "number" ? new Date(value).toISOString() : value;
}
