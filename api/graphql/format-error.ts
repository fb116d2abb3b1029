/**
 * The one formatter from errors to GraphQL `errors[]` entries (SPEC.md §2):
 * message, locations, path and `extensions.code`; AppErrors keep their code in
 * upper case with their data (positions, valid names); anything else is masked.
 */
import type { GraphQLError, GraphQLFormattedError } from "graphql";
import {
  CatalogueChangedError,
  FilterParseError,
  isAppError,
  UnknownFieldError,
} from "../../common/errors.ts";
import { describeError, type Logger } from "../../common/log.ts";

/** True for an error no part of the service meant to tell the caller (masked as internal). */
export function isUnexpected(error: GraphQLError): boolean {
  const original = error.originalError;
  return !!original && original.name !== "GraphQLError" && !isAppError(original);
}

/**
 * @param catalogueChanged the tenant's catalogue changed while the request ran: an unexpected
 *   error is told as that (a table or column gone under a resolver), not masked as internal.
 */
export function formatGraphQLError(
  error: GraphQLError,
  log: Logger,
  catalogueChanged = false,
): GraphQLFormattedError {
  const base = { message: error.message, locations: error.locations, path: error.path };
  let original = error.originalError;
  if (catalogueChanged && isUnexpected(error)) {
    log.warn("a resolver failed on a catalogue changed under it", describeError(original));
    original = new CatalogueChangedError();
  }
  if (!original || original.name === "GraphQLError") {
    return { ...base, extensions: { code: "GRAPHQL_VALIDATION_FAILED", ...error.extensions } };
  }
  if (isAppError(original)) {
    const extensions: Record<string, unknown> = { code: original.code.toUpperCase() };
    if (original instanceof FilterParseError) {
      Object.assign(extensions, {
        position: original.position,
        expected: original.expected,
        found: original.found,
      });
    }
    if (original instanceof UnknownFieldError) {
      Object.assign(extensions, {
        object: original.objectName,
        validFields: original.validNames,
        suggestion: original.suggestion,
      });
      if (original.position) extensions.position = original.position;
    }
    if (original.details) extensions.details = original.details;
    return { ...base, message: original.message, extensions };
  }
  const errorId = crypto.randomUUID();
  log.error("unhandled error in a resolver", { errorId, ...describeError(original) });
  return { ...base, message: "internal error", extensions: { code: "INTERNAL", errorId } };
}

/** A request-level error (the document never ran): `{errors:[{message, extensions:{code}}]}`. */
export function requestError(code: string, message: string, extra: Partial<GraphQLFormattedError> = {}) {
  return { errors: [{ message, ...extra, extensions: { code, ...extra.extensions } }] };
}
