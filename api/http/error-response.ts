/**
 * The one place where errors become HTTP answers: code → status, body shaped
 * per SPEC.md §2. Unknown errors are logged with an id and masked.
 */
import {
  type AppError,
  type ErrorCode,
  isAppError,
  MethodNotAllowedError,
  RateLimitedError,
} from "../../common/errors.ts";
import { describeError, type Logger } from "../../common/log.ts";

export const STATUS_BY_CODE: Record<ErrorCode, number> = {
  unauthorized: 401,
  insufficient_access: 403,
  not_found: 404,
  method_not_allowed: 405,
  bad_request: 400,
  validation_failed: 400,
  conflict: 409,
  payload_too_large: 413,
  rate_limited: 429,
  unavailable: 503,
  internal: 500,
  filter_parse_error: 400,
  unknown_field: 400,
  invalid_key_field: 400,
  unique_violation: 409,
  reference_not_found: 400,
  unknown_id_alias: 400,
  limit_exceeded: 400,
};

export interface ErrorBody {
  errorType: ErrorCode;
  message: string;
  errorId?: string;
  details?: { path: string; message: string }[];
}

/** Renders any thrown value as a JSON error Response. */
export function errorResponse(error: unknown, log: Logger): Response {
  if (isAppError(error)) return appErrorResponse(error);
  const errorId = crypto.randomUUID();
  log.error("unhandled error", { errorId, ...describeError(error) });
  return json(500, { errorType: "internal", message: "internal error", errorId });
}

function appErrorResponse(error: AppError): Response {
  const body: ErrorBody = { errorType: error.code, message: error.message };
  if (error.details) body.details = error.details;
  const headers: Record<string, string> = {};
  if (error instanceof RateLimitedError) headers["retry-after"] = String(error.retryAfterSeconds);
  if (error instanceof MethodNotAllowedError) headers.allow = error.allowed.join(", ");
  return json(STATUS_BY_CODE[error.code], body, headers);
}

function json(status: number, body: ErrorBody, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}
