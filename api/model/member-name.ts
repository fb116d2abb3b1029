/**
 * How a field is named where its value is written and read: in mutation inputs, record types and
 * change payloads. Part of the data model, not of one protocol: the record-write engine names the
 * fields of its errors by it, the GraphQL schema its members.
 */
import type { FieldDef } from "./catalogue.ts";

/** The member holding a reference's UID: `Region` → `RegionId`. */
export const referenceIdMember = (field: string) => `${field}Id`;

/** A field's member in the record types and inputs: its name, or for a reference `<Name>Id`. */
export const memberName = (field: Pick<FieldDef, "type" | "name">) =>
  field.type === "reference" ? referenceIdMember(field.name) : field.name;
