/**
 * `{{ NAME }}` templates in webhook URLs and header values, resolved from a
 * tenant's config variables. Pure: the API lists the names a definition
 * needs (to refuse undefined ones), the dispatcher renders at delivery time.
 */

/** The kinds of config variable a template reads: a `secret` one's value is sealed at rest (secret-box.ts). */
export const CONFIG_TYPES = ["plain-text", "secret"] as const;
export type ConfigType = (typeof CONFIG_TYPES)[number];

const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

/** The variable names `text` refers to, each once, in order of appearance. */
export function templateVariables(text: string): string[] {
  // Most URLs and header values have no placeholder (this runs for every delivery).
  if (!text.includes("{{")) return [];
  return [...new Set([...text.matchAll(PLACEHOLDER)].map((match) => match[1] as string))];
}

/** Thrown when a template names variables that are not defined; lists all of them. */
export class MissingVariablesError extends Error {
  constructor(readonly missing: string[]) {
    super(`undefined config variable${missing.length > 1 ? "s" : ""}: ${missing.join(", ")}`);
    this.name = "MissingVariablesError";
  }
}

/** Replaces every placeholder with its value. @throws MissingVariablesError naming every undefined one. */
export function renderTemplate(text: string, values: ReadonlyMap<string, string>): string {
  if (!text.includes("{{")) return text;
  const missing = templateVariables(text).filter((name) => !values.has(name));
  if (missing.length > 0) throw new MissingVariablesError(missing);
  return text.replace(PLACEHOLDER, (_, name: string) => values.get(name) as string);
}
