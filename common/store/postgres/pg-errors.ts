/**
 * PostgreSQL's errors as the port's: recognised by SQLSTATE (Bun's `errno`)
 * and the structured fields the server sends (schema, constraint), never by
 * message text.
 */
import { ConflictError, LimitExceededError, ValidationError } from "../../errors.ts";

const SERIALIZATION_FAILURE = "40001";
const DEADLOCK_DETECTED = "40P01";
/** A lock not granted within the unit of work's lock_timeout (api/store/postgres/postgres-store.ts). */
const LOCK_NOT_AVAILABLE = "55P03";
const UNIQUE_VIOLATION = "23505";
/** A character the encoding cannot hold: in UTF-8, only U+0000 reaches it from a JavaScript string. */
const UNTRANSLATABLE_CHARACTER = "22021";
/**
 * A statement canceled: by the statement_timeout the engine sets (postgres-engine.ts), or by
 * someone's pg_cancel_backend (the SQLSTATE is the same; only the message, never read, differs).
 */
const QUERY_CANCELED = "57014";
/**
 * A limit of the server's own (program_limit_exceeded): for a record write, a row past the 8160 bytes a
 * heap page holds once every long value is moved out of it (each still leaves an 18-byte pointer).
 */
const PROGRAM_LIMIT_EXCEEDED = "54000";
/** A table, or a column, a statement names is not there. */
const UNDEFINED_TABLE = "42P01";
const UNDEFINED_COLUMN = "42703";

interface ServerError {
  errno?: unknown;
  schema?: unknown;
  constraint?: unknown;
}

/** The SQLSTATE of a server error, or null for anything else. */
function sqlState(error: unknown): string | null {
  const errno = (error as ServerError | null)?.errno;
  return typeof errno === "string" ? errno : null;
}

/**
 * Two transactions creating the same table, type, index or schema at once (each with IF NOT EXISTS,
 * each finding none): the loser fails with one of these, or with a unique violation in
 * PostgreSQL's own catalogue. Run again, it finds the object there.
 */
const CATALOGUE_RACES = new Set(["42P07", "42710", "42P06"]);

/**
 * True for a failure that running the unit of work again may clear: a serialization failure, a
 * deadlock, a lock waited for too long, or a catalogue race (above). The engine's DDL always says IF (NOT) EXISTS, so a
 * duplicate object is never a mistake of its own that a retry would repeat forever.
 */
export function isRetryable(error: unknown): boolean {
  const state = sqlState(error);
  if (state === SERIALIZATION_FAILURE || state === DEADLOCK_DETECTED || state === LOCK_NOT_AVAILABLE)
    return true;
  if (state !== null && CATALOGUE_RACES.has(state)) return true;
  return state === UNIQUE_VIOLATION && (error as ServerError).schema === "pg_catalog";
}

/** The constraint (or unique index) a unique violation of ours names, or null for any other error. */
export function violatedUnique(error: unknown): string | null {
  if (sqlState(error) !== UNIQUE_VIOLATION || (error as ServerError).schema === "pg_catalog") return null;
  const constraint = (error as ServerError).constraint;
  return typeof constraint === "string" ? constraint : "";
}

/** What text holding U+0000 is told. */
export const NUL_IN_TEXT = "text cannot hold the NUL character (U+0000)";

/** True when the server refused text holding U+0000, which PostgreSQL's text cannot store. */
export const isNulInText = (error: unknown) => sqlState(error) === UNTRANSLATABLE_CHARACTER;

/** What the port shows for text holding U+0000, which PostgreSQL's text cannot store. */
export const nulInTextError = () => new ValidationError(NUL_IN_TEXT, [{ path: "", message: NUL_IN_TEXT }]);

/** True when the server refused a statement for one of its own size limits (a row too big, say). */
export const isProgramLimit = (error: unknown) => sqlState(error) === PROGRAM_LIMIT_EXCEEDED;

/**
 * Runs `write`, whose text values are `members` (by the names the caller knows them by); text holding
 * U+0000 is refused as a ValidationError naming each member that holds it.
 */
export async function namingNul<T>(members: Record<string, unknown>, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    const holding = Object.keys(members).filter((name) => holdsNul(members[name]));
    if (!(error instanceof ValidationError) || holding.length === 0) throw error;
    throw new ValidationError(
      `${holding.join(", ")}: ${NUL_IN_TEXT}`,
      holding.map((path) => ({ path, message: NUL_IN_TEXT })),
    );
  }
}

/** True when `value`, text or a list of texts, holds U+0000 (which a lookup by it can then never find). */
export const holdsNul = (value: unknown): boolean =>
  typeof value === "string" ? value.includes("\u0000") : Array.isArray(value) && value.some(holdsNul);

/** True when a statement named a table or a column that is not there. */
export function isStorageGone(error: unknown): boolean {
  const state = sqlState(error);
  return state === UNDEFINED_TABLE || state === UNDEFINED_COLUMN;
}

/**
 * What the port shows for a statement canceled past the store's statement time limit: the caller's
 * read (or write) asked too much of the server, like a cost past GRAPHQL_MAX_COST, so it is a
 * LimitExceededError (400 / LIMIT_EXCEEDED), not a 503 that would invite sending it again as it is.
 */
const statementTimeoutError = (timeoutMs: number) =>
  new LimitExceededError(
    `the query ran longer than ${timeoutMs} ms (STORE_STATEMENT_TIMEOUT_MS) and was canceled; narrow its filter (a LIKE '%…' over long text reads every character of every row)`,
  );

/**
 * The error the port shows for a server error: U+0000 in text is a ValidationError; with a
 * statement time limit (`statementTimeoutMs` > 0), a canceled statement a LimitExceededError; the
 * rest as thrown (a cancel without a limit set is an operator's, and stays unexpected).
 */
export function translateError(error: unknown, statementTimeoutMs = 0): unknown {
  if (isNulInText(error)) return nulInTextError();
  if (statementTimeoutMs > 0 && sqlState(error) === QUERY_CANCELED)
    return statementTimeoutError(statementTimeoutMs);
  return error;
}

/** Runs `write`; a unique violation (a name taken, perhaps by a race lost) becomes a ConflictError. */
export async function uniquely<T>(message: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (violatedUnique(error) !== null) throw new ConflictError(message);
    throw error;
  }
}
