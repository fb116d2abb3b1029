/**
 * The matcher: the change entries of one committed mutation × subscriptions →
 * for each subscriber with at least one matching change, the elements of its
 * event in mutation order (SPEC.md §8, seed §6.2). Subscribers are webhooks
 * today (the change feed's webhook consumer makes delivery jobs of the
 * matches) and live subscriptions next. Pure: lookups for filters come in
 * through the evaluation context.
 */
import { type EvaluationContext, evaluateExtendedFilter, evaluateFilter } from "../eql/evaluate-filter.ts";
import type { FieldDef } from "../model/catalogue.ts";
import { type FieldValue, type LoggedChange, type RecordValues, sameValue } from "../model/record-values.ts";
import type { Subscription } from "./subscription.ts";

export interface MatchContext extends EvaluationContext {
  /** Custom objects fire only while tracked. */
  isTracked(objectName: string): boolean;
}

/** What one mutation brings one subscriber: its elements, one per firing change. */
export interface SubscriberMatch<S> {
  subscriber: S;
  /** `{"data":{"<rootKey>":{...}}}` per change that fires the subscription, in mutation order. */
  elements: unknown[];
}

/**
 * @param changes the entries of one mutation, in their order within it.
 * @param subscribers anything holding a subscription (a compiled webhook, a live subscription).
 * @returns one match per subscriber some change fires, in the subscribers' order.
 */
export function matchChanges<S extends { subscription: Subscription }>(
  changes: readonly LoggedChange[],
  subscribers: readonly S[],
  context: MatchContext,
): SubscriberMatch<S>[] {
  const matches: SubscriberMatch<S>[] = [];
  for (const subscriber of subscribers) {
    const { subscription } = subscriber;
    const elements = changes
      .filter((change) => fires(subscription, change, context))
      .map((change) => shapeElement(subscription, change));
    if (elements.length > 0) matches.push({ subscriber, elements });
  }
  return matches;
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

/**
 * The element a change makes for a subscription that fires on it:
 * `{"data":{"schemaX":{...members in the order selected}}}`. INSERT: previous = data; DELETE: both the last values.
 */
export function shapeElement(
  subscription: Subscription,
  change: Pick<LoggedChange, "operation" | "before" | "after" | "committedAt">,
): unknown {
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
