/**
 * The MongoDB driver's errors as the port's: recognised by class, server code
 * and error label, and by the structured fields a duplicate key carries
 * (`keyPattern`, `keyValue`), never by message text. A driver error in, the
 * service's typed error (common/errors.ts) out, or the error as it was when
 * nothing here knows it (the API answers those as an opaque 500).
 */
import {
  MongoBulkWriteError,
  MongoError,
  MongoErrorLabel,
  MongoNetworkError,
  MongoNotConnectedError,
  MongoOperationTimeoutError,
  MongoServerError,
  MongoServerSelectionError,
  MongoTopologyClosedError,
} from "mongodb";
import {
  ConflictError,
  isAppError,
  PayloadTooLargeError,
  UnavailableError,
  UniqueViolationError,
} from "../../errors.ts";

/** The server's error codes the engine acts on (src/mongo/base/error_codes.yml of the server). */
const SERVER_CODE = {
  /** A unique index (an `_id` included) already holds the value. */
  duplicateKey: 11000,
  /** Another transaction wrote the document since this one's snapshot (labelled TransientTransactionError). */
  writeConflict: 112,
  /** The transaction was aborted (by a conflict, a timeout, a failover) before this statement. */
  noSuchTransaction: 251,
  /** A document over 16 MiB. */
  objectTooLarge: 10334,
  /** Too many documents or bytes in one transaction's cache. */
  transactionTooLarge: 257,
  notWritablePrimary: 10107,
  primarySteppedDown: 189,
  interruptedDueToReplStateChange: 11602,
  shutdownInProgress: 91,
} as const;

/** The codes that say the replica set is changing primary or stopping: the server, not the request, is the problem. */
const SERVER_UNAVAILABLE = new Set<number>([
  SERVER_CODE.notWritablePrimary,
  SERVER_CODE.primarySteppedDown,
  SERVER_CODE.interruptedDueToReplStateChange,
  SERVER_CODE.shutdownInProgress,
]);

/** A duplicate key, as the server reports it: the index's keys and the values that clashed. */
export interface DuplicateKey {
  keyPattern: Record<string, unknown>;
  keyValue: Record<string, unknown>;
}

/** A unique-key document's `_id` (layout.ts, record_keys): tenant, object id, field id, value. */
export interface RecordKeyId {
  t: string;
  o: string;
  f: string;
  v: unknown;
}

const codeOf = (error: unknown): number | null =>
  error instanceof MongoError && typeof error.code === "number" ? error.code : null;

/** True for an error withTransaction runs the work again on: a write conflict, or any TransientTransactionError. */
export function isTransient(error: unknown): boolean {
  if (!(error instanceof MongoError)) return false;
  return (
    error.hasErrorLabel(MongoErrorLabel.TransientTransactionError) ||
    codeOf(error) === SERVER_CODE.writeConflict
  );
}

/** The duplicate key an error reports (a single write's, or the first of a bulk write's), or null. */
function duplicateKeyOf(error: unknown): DuplicateKey | null {
  if (error instanceof MongoBulkWriteError) {
    const list = [error.writeErrors].flat();
    const duplicate = list.find((writeError) => writeError?.code === SERVER_CODE.duplicateKey);
    if (!duplicate) return null;
    // A bulk write's errors keep the operation, not the server's keyValue: the inserted document's `_id` is the key.
    const operation = duplicate.getOperation() as { _id?: unknown } | undefined;
    return { keyPattern: {}, keyValue: operation && "_id" in operation ? { _id: operation._id } : {} };
  }
  if (!(error instanceof MongoServerError) || error.code !== SERVER_CODE.duplicateKey) return null;
  const { keyPattern, keyValue } = error as MongoServerError & Partial<DuplicateKey>;
  return { keyPattern: keyPattern ?? {}, keyValue: keyValue ?? {} };
}

/**
 * True when `error` is a duplicate key in the unique index on exactly `fields` (in order), as the
 * server reports it (`keyPattern`): for a member that words a clash of its own index (a taken
 * webhook name) rather than leave it to toServiceError's generic ConflictError.
 */
export function isDuplicateKeyOn(error: unknown, fields: readonly string[]): boolean {
  const duplicate = duplicateKeyOf(error);
  // A clash whose index the server did not name (a bulk write's) is no index's in particular.
  if (duplicate === null || fields.length === 0) return false;
  const pattern = Object.keys(duplicate.keyPattern);
  return pattern.length === fields.length && pattern.every((field, i) => field === fields[i]);
}

/**
 * Which document of a write met a duplicate key: its index among the write's documents (a bulk
 * write's failed operation; 0 for a single document's write), or null when `error` is no
 * duplicate key. Lets the writer name the value from what it wrote, not from the server's text.
 */
export function duplicateKeyIndex(error: unknown): number | null {
  if (error instanceof MongoBulkWriteError) {
    const duplicate = [error.writeErrors]
      .flat()
      .find((writeError) => writeError?.code === SERVER_CODE.duplicateKey);
    return duplicate ? duplicate.index : null;
  }
  return error instanceof MongoServerError && error.code === SERVER_CODE.duplicateKey ? 0 : null;
}

/** The unique-key document a duplicate key names, when it is one of record_keys' (its `_id` is the key), else null. */
function recordKeyOf(duplicate: DuplicateKey): RecordKeyId | null {
  const id = duplicate.keyValue._id as Partial<RecordKeyId> | undefined;
  if (id === null || typeof id !== "object") return null;
  if (typeof id.t !== "string" || typeof id.o !== "string" || typeof id.f !== "string" || !("v" in id))
    return null;
  return { t: id.t, o: id.o, f: id.f, v: id.v };
}

/** How a unique-key clash reads: the object and field the key document names, when the caller knows them. */
export type KeyNamer = (key: RecordKeyId) => { object: string; field: string } | null;

/**
 * The service's error for a driver error that escaped the engine's own handling:
 * - a duplicate key in record_keys → UniqueViolationError naming the object and field (through
 *   `nameKey`) and the value, as the other engines word it; in another unique index →
 *   ConflictError naming the index's fields;
 * - a write conflict still there after the unit of work's last run, a network error, no server
 *   selectable, a primary stepping down, a client closed or never connected, a timeout →
 *   UnavailableError (the caller may try again);
 * - a document over 16 MiB → PayloadTooLargeError;
 * - the service's own errors, and anything else, as they are.
 */
export function toServiceError(error: unknown, nameKey: KeyNamer = () => null): unknown {
  if (isAppError(error)) return error;
  const duplicate = duplicateKeyOf(error);
  if (duplicate) {
    const key = recordKeyOf(duplicate);
    if (key === null) {
      const fields = Object.keys(duplicate.keyPattern);
      return new ConflictError(
        `a unique value is taken${fields.length > 0 ? ` (${fields.join(", ")})` : ""}`,
      );
    }
    const named = nameKey(key);
    if (named === null) return new UniqueViolationError("a unique value is another record's");
    return new UniqueViolationError(
      `${named.object}.${named.field} must be unique: another record has ${JSON.stringify(key.v ?? null)}`,
    );
  }
  if (isTransient(error))
    return new UnavailableError("the store could not commit the unit of work (write conflicts); try again");
  if (error instanceof MongoNetworkError || error instanceof MongoServerSelectionError)
    return new UnavailableError(`the MongoDB server cannot be reached: ${firstLine(error)}`);
  // The client is closing (a request still running at shutdown), or never connected.
  if (error instanceof MongoTopologyClosedError || error instanceof MongoNotConnectedError)
    return new UnavailableError(`the store is not connected: ${firstLine(error)}`);
  if (error instanceof MongoOperationTimeoutError)
    return new UnavailableError(`the MongoDB server did not answer in time: ${firstLine(error)}`);
  const code = codeOf(error);
  if (code !== null && SERVER_UNAVAILABLE.has(code))
    return new UnavailableError(
      `the MongoDB replica set has no writable primary right now: ${firstLine(error)}`,
    );
  if (code === SERVER_CODE.objectTooLarge)
    return new PayloadTooLargeError("a document would exceed MongoDB's limit of 16 MiB");
  return error;
}

const firstLine = (error: unknown) => String((error as Error).message ?? error).split("\n")[0] ?? "";

/**
 * Where a duplicate key failed within its write: 0 for a single write, the operation's index for a
 * bulk one (an insertMany's document); null when `error` is no duplicate key, or one the unit of
 * work runs again (TransientTransactionError).
 */
function duplicateIndexOf(error: unknown): number | null {
  return isTransient(error) ? null : duplicateKeyIndex(error);
}

/**
 * Runs `write`; a duplicate key it meets (a name a committed write took: a concurrent one is a
 * write conflict, which the unit of work runs again) becomes a ConflictError worded as the other
 * engines word it for the same write (their `uniquely`): `clash`, or `clash` of the index of the
 * failed operation within the write (0 for a single write). Inside a transaction the server has
 * aborted it by then, so the unit of work fails with that error. Anything else is rethrown as it is.
 */
export async function uniquely<T>(
  write: () => Promise<T>,
  clash: string | ((index: number) => string),
): Promise<T> {
  try {
    return await write();
  } catch (error) {
    const index = duplicateIndexOf(error);
    if (index !== null) throw new ConflictError(typeof clash === "string" ? clash : clash(index));
    throw error;
  }
}
