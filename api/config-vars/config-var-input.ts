/** The body of `POST /configuration/extension`, checked at the trust boundary. */
import { z } from "zod";
import { CONFIG_TYPES } from "../store/store.ts";

/** Keys are what `{{ KEY }}` templates can name. */
const CONFIG_KEY = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

export const ConfigVariableInputSchema = z.object({
  key: z
    .string()
    .regex(CONFIG_KEY, "letters, digits and underscores, not starting with a digit, at most 128"),
  value: z.string().max(8192, "at most 8 KiB"),
  configType: z.enum(CONFIG_TYPES).default("plain-text"),
  description: z.string().max(1000).nullish(),
});

export type ConfigVariableInput = z.infer<typeof ConfigVariableInputSchema>;
