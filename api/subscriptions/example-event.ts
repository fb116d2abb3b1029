/**
 * An example event for a subscription (what POST /webhooks/{id}/test sends): the subscription in,
 * one element shaped exactly as a real change would shape it out, with an example value of each
 * selected field's type. Pure: the time comes in.
 */
import type { FieldDef } from "../model/catalogue.ts";
import type { ChangeOperation, FieldValue, RecordValues } from "../model/record-values.ts";
import { shapeElement } from "./match-changes.ts";
import type { Subscription } from "./subscription.ts";

/** The UID example records and references carry: recognisably not a real record's. */
export const EXAMPLE_UID = "00000000-0000-4000-8000-000000000000";

/** An example value of the field's type, within its bounds (length, picklist items). */
export function exampleValue(field: FieldDef, at: number): FieldValue {
  const text = (value: string) => (field.maxLength === null ? value : value.slice(0, field.maxLength));
  switch (field.type) {
    case "id":
    case "reference":
      return EXAMPLE_UID;
    case "int":
      return 42;
    case "duration":
      return 60;
    case "decimal":
      return "12.5";
    case "boolean":
      return true;
    case "date":
      return new Date(at).toISOString().slice(0, 10);
    case "datetime":
      return at;
    case "time":
      return "12:00:00.000";
    case "picklist":
      return field.items?.[0] ?? text("example");
    case "multipicklist":
      return field.items?.slice(0, 1) ?? [];
    case "url":
      return text("https://example.com/");
    default:
      return text(`example ${field.name}`);
  }
}

/** The operation an example shows: INSERT when the subscription takes it, else the first it takes. */
const exampleOperation = (subscription: Subscription): ChangeOperation =>
  !subscription.operations || subscription.operations.has("INSERT")
    ? "INSERT"
    : ([...subscription.operations][0] ?? "INSERT");

/** One element as a change of an example record at `at` (ms) would make it for `subscription`. */
export function exampleElement(subscription: Subscription, at: number): unknown {
  const values: RecordValues = {};
  for (const field of subscription.object.fields) values[field.name] = exampleValue(field, at);
  const operation = exampleOperation(subscription);
  return shapeElement(subscription, {
    operation,
    before: operation === "INSERT" ? null : values,
    after: operation === "DELETE" ? null : values,
    committedAt: at,
  });
}
