/**
 * Writes docs/STANDARD_OBJECTS.md, the reference of the standard objects, from their definitions
 * (api/model/standard-objects.ts), so the two cannot drift: `bun scripts/standard-objects-doc.ts`.
 * A test fails when the file differs from what this renders.
 */
import { join } from "node:path";
import type { FieldDef, ObjectDef } from "../api/model/catalogue.ts";
import { memberName } from "../api/model/member-name.ts";
import { names } from "../api/model/naming.ts";
import { STANDARD_OBJECTS } from "../api/model/standard-objects.ts";

const typeOf = (field: FieldDef) => (field.type === "reference" ? `→ ${field.referenceTo}` : field.type);

function notesOf(field: FieldDef): string {
  const notes: string[] = [];
  if (field.required) notes.push("required");
  if (field.unique) notes.push("unique");
  if (field.readOnly) notes.push("read-only");
  if (field.maxLength !== null && field.type !== "reference" && field.type !== "id")
    notes.push(`≤ ${field.maxLength} characters`);
  if (field.items) notes.push(`values: ${field.items.join(", ")}`);
  if (field.defaultValue !== null) notes.push(`default ${JSON.stringify(field.defaultValue)}`);
  return notes.join("; ");
}

const row = (field: FieldDef) =>
  `| ${field.name} | \`${memberName(field)}\` | ${typeOf(field)} | ${notesOf(field)} | ${field.reverseName ?? ""} |`;

function objectSection(object: ObjectDef): string {
  const own = object.fields.filter((field) => !field.system);
  return [
    `## ${object.name}`,
    "",
    `${object.label}. Queries \`${names.listField(object.name)}\`, \`${names.byIdField(object.name)}\`; mutations ${[
      names.insertField(object.name),
      names.updateField(object.name),
      names.upsertField(object.name),
      names.deleteField(object.name),
    ]
      .map((name) => `\`${name}\``)
      .join(", ")}; webhooks \`${names.subscriptionField(object.name)}\`.`,
    "",
    "| field | GraphQL member | type | rules | reverse list on the target |",
    "|---|---|---|---|---|",
    ...own.map(row),
  ].join("\n");
}

/** The whole reference, as Markdown. */
export function renderStandardObjectsDoc(objects: readonly ObjectDef[] = STANDARD_OBJECTS): string {
  const system = objects[0]?.fields.filter((field) => field.system) ?? [];
  return `# Standard objects

Every tenant starts with these objects (generated from \`api/model/standard-objects.ts\` by
\`bun scripts/standard-objects-doc.ts\`; a test keeps the two equal). Custom fields may be added to any of
them (\`POST /custom/standalone/fields\`). Picklist fields are \`String\` in GraphQL; their values are
checked on write and listed in the schema's descriptions.

Every object also has the system fields, all read-only:

| field | GraphQL member | type |
|---|---|---|
${system.map((field) => `| ${field.name} | \`${memberName(field)}\` | ${typeOf(field)} |`).join("\n")}

A reference field \`Foo → X\` appears as \`FooId: ID\` and \`Foo: X\`; \`X\` gets the reverse list field named
in the last column.

${objects.map(objectSection).join("\n\n")}
`;
}

if (import.meta.main) {
  const target = join(import.meta.dir, "../docs/STANDARD_OBJECTS.md");
  await Bun.write(target, renderStandardObjectsDoc());
  console.log(`written to ${target}`);
}
