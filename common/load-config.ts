/**
 * Reads a process's configuration from the environment once: a zod schema in,
 * a frozen, typed value out. Every problem is reported at once.
 */
import type { z } from "zod";
import { ConfigError } from "./errors.ts";

/**
 * Parses `env` with `schema`.
 * @throws ConfigError listing every invalid or missing variable.
 */
export function loadConfig<S extends z.ZodType>(
  schema: S,
  env: Record<string, string | undefined>,
): Readonly<z.infer<S>> {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((issue) => `${issue.path.join(".") || "(environment)"}: ${issue.message}`),
    );
  }
  return Object.freeze(parsed.data);
}

/** Treats an empty string as unset, so `FOO=` falls back to the default. */
export function emptyAsUndefined(value: unknown): unknown {
  return value === "" ? undefined : value;
}
