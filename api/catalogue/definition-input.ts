/** The request bodies of the custom-objects REST (SPEC.md §6), checked for shape at the trust boundary. */
import { z } from "zod";

const name = z.string().min(1).max(64);
const text = z.string().max(1000);

const ColumnInputSchema = z.object({
  type: z.string().min(1).max(32),
  unique: z.boolean().optional(),
  required: z.boolean().optional(),
  maxLength: z.number().int().positive().max(131_072).optional(),
  precision: z.number().int().min(1).max(38).optional(),
  scale: z.number().int().min(0).max(38).optional(),
  items: z
    .array(
      z.union([
        z.string().min(1).max(255),
        z.object({ value: z.string().min(1).max(255) }).transform((item) => item.value),
      ]),
    )
    .max(1000)
    .optional(),
  referenceSchemaName: name.optional(),
  defaultValue: z.union([z.string().max(131_072), z.number(), z.boolean(), z.null()]).optional(),
});

export const FieldInputSchema = z.object({
  name,
  label: text.nullish(),
  description: text.nullish(),
  column: ColumnInputSchema,
});

export const ObjectInputSchema = z.object({
  name,
  label: text.nullish(),
  description: text.nullish(),
  // How many: the catalogue's limit (CUSTOM_MAX_FIELDS_PER_OBJECT), which also counts fields added later.
  fields: z.array(FieldInputSchema).default([]),
});

export const AddFieldInputSchema = FieldInputSchema.extend({ schemaName: name });

export type FieldInput = z.infer<typeof FieldInputSchema>;
export type ObjectInput = z.infer<typeof ObjectInputSchema>;
export type AddFieldInput = z.infer<typeof AddFieldInputSchema>;
