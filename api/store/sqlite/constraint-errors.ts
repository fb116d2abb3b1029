/**
 * SQLite's constraint failures as the port's typed errors. A failure is
 * recognised by its result code (`SQLITE_CONSTRAINT_UNIQUE`, ...), never by
 * its message; which value clashed is then looked up, not parsed out of it.
 */
import { ConflictError } from "../../../common/errors.ts";

/** True for a failed UNIQUE or PRIMARY KEY constraint. */
export function isUniqueFailure(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "SQLITE_CONSTRAINT_UNIQUE" || code === "SQLITE_CONSTRAINT_PRIMARYKEY";
}

/** Runs `write`; a unique-constraint failure (a name taken, perhaps by a race lost) becomes a ConflictError. */
export function uniquely<T>(message: string, write: () => T): T {
  try {
    return write();
  } catch (error) {
    if (isUniqueFailure(error)) throw new ConflictError(message);
    throw error;
  }
}
