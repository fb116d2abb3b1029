/**
 * Typed errors with stable codes. They carry no HTTP knowledge: the API maps
 * `code` to a status in one table (`STATUS_BY_CODE`, api/http/error-response.ts)
 * and to a GraphQL `extensions.code` in one formatter (api/graphql/format-error.ts).
 */

/** Every code an error of this service can carry. Stable: clients may branch on them. */
export type ErrorCode =
  | "unauthorized"
  | "insufficient_access"
  | "not_found"
  | "method_not_allowed"
  | "bad_request"
  | "validation_failed"
  | "conflict"
  | "payload_too_large"
  | "rate_limited"
  | "unavailable"
  | "internal"
  // Data-level codes, surfaced as GraphQL `extensions.code` in upper case (FILTER_PARSE_ERROR, ...).
  | "filter_parse_error"
  | "unknown_field"
  | "invalid_key_field"
  | "unique_violation"
  | "reference_not_found"
  | "unknown_id_alias"
  | "limit_exceeded";

/** One problem of a validation failure: where (a path into the input) and what. */
export interface ErrorDetail {
  path: string;
  message: string;
}

/** Base class: a message meant for the caller and a stable code. */
export abstract class AppError extends Error {
  abstract readonly code: ErrorCode;
  readonly details: ErrorDetail[] | undefined;

  constructor(message: string, details?: ErrorDetail[]) {
    super(message);
    this.name = new.target.name;
    this.details = details;
  }
}

/** The request carries no usable credentials (missing, malformed, expired, revoked, badly signed). */
export class UnauthorizedError extends AppError {
  readonly code = "unauthorized";
}

/** The credentials are fine but lack the role the operation needs. */
export class InsufficientAccessError extends AppError {
  readonly code = "insufficient_access";
}

export class NotFoundError extends AppError {
  readonly code = "not_found";
}

/** The path exists but not with this method; `allowed` lists the methods it has (the `Allow` header). */
export class MethodNotAllowedError extends AppError {
  readonly code = "method_not_allowed";
  constructor(
    message: string,
    readonly allowed: string[],
  ) {
    super(message);
  }
}

/** The request could not be understood (malformed JSON, wrong content type, ...). */
export class BadRequestError extends AppError {
  readonly code = "bad_request";
}

/** The request was understood but its values are wrong; `details` lists every problem. */
export class ValidationError extends AppError {
  readonly code = "validation_failed";
}

/** The request clashes with existing state (a duplicate name, ...). */
export class ConflictError extends AppError {
  readonly code = "conflict";
}

/**
 * A request worked from a catalogue another request changed before it was done (an object or field
 * it uses deleted, or its type changed): nothing was written; sent again, it runs on the new one.
 */
export class CatalogueChangedError extends ConflictError {
  constructor() {
    super("the tenant's schema changed while this request ran (an object or field it uses); send it again");
  }
}

export class PayloadTooLargeError extends AppError {
  readonly code = "payload_too_large";
}

/** Too many requests; the caller may retry after `retryAfterSeconds`. */
export class RateLimitedError extends AppError {
  readonly code = "rate_limited";
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(message);
  }
}

/** A dependency (store, Redis) cannot be reached right now. */
export class UnavailableError extends AppError {
  readonly code = "unavailable";
}

/** Where in a source text (a filter, an orderBy) a problem is: 0-based offset, 1-based line and column. */
export interface SourcePosition {
  offset: number;
  line: number;
  column: number;
}

/** A filter or orderBy string does not parse or does not type-check. */
export class FilterParseError extends AppError {
  readonly code = "filter_parse_error";
  constructor(
    message: string,
    readonly position: SourcePosition,
    readonly expected: string | null = null,
    readonly found: string | null = null,
  ) {
    super(message);
  }
}

/** A field name that the object does not have. */
export class UnknownFieldError extends AppError {
  readonly code = "unknown_field";
  constructor(
    message: string,
    readonly objectName: string,
    readonly validNames: string[],
    readonly suggestion: string | null,
    readonly position: SourcePosition | null = null,
  ) {
    super(message);
  }
}

/** A size limit (depth, cost, aliases, page size, ...) was exceeded. */
export class LimitExceededError extends AppError {
  readonly code = "limit_exceeded";
}

/** An upsert's `keyField` is not a unique upsert key of the object. */
export class InvalidKeyFieldError extends AppError {
  readonly code = "invalid_key_field";
}

/** A write would give a unique field a value another record already has. */
export class UniqueViolationError extends AppError {
  readonly code = "unique_violation";
}

/** A reference input points at no record of the target object. */
export class ReferenceNotFoundError extends AppError {
  readonly code = "reference_not_found";
}

/** An `idAlias` used before (or without) being defined, or defined twice. */
export class UnknownIdAliasError extends AppError {
  readonly code = "unknown_id_alias";
}

/** Configuration is invalid; every problem is listed. Raised at start-up only. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join("\n  - ")}`);
    this.name = "ConfigError";
  }
}

export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError;
}
