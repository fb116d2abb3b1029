/**
 * The paging arguments of lists, checked the same way wherever a query is
 * answered: `first` and `offset` of connections, `limit` of reverse lists.
 */
import { LimitExceededError, ValidationError } from "../../../common/errors.ts";

export interface QueryLimits {
  /** Largest (and default) `first`. */
  maxPageSize: number;
  /** Largest `offset`. */
  maxOffset: number;
  /** Default and largest `limit` of reverse lists. */
  defaultRelatedLimit: number;
  maxRelatedLimit: number;
}

/**
 * `first` (default and largest: the page size limit) and `offset` (default 0, at most the offset limit:
 * the store reads past every skipped row) of a connection.
 */
export function pageWindow(
  first: number | null | undefined,
  offset: number | null | undefined,
  limits: Pick<QueryLimits, "maxPageSize" | "maxOffset">,
): { first: number; offset: number } {
  const size = first ?? limits.maxPageSize;
  if (size > limits.maxPageSize) throw new LimitExceededError(`first may not exceed ${limits.maxPageSize}`);
  if ((offset ?? 0) > limits.maxOffset)
    throw new LimitExceededError(
      `offset may not exceed ${limits.maxOffset}; page with after (a cursor) instead`,
    );
  if (size < 0 || (offset ?? 0) < 0) throw new ValidationError("first and offset must not be negative");
  return { first: size, offset: offset ?? 0 };
}

/** `limit` of a reverse list: children per parent. */
export function relatedLimit(
  limit: number | null | undefined,
  limits: Pick<QueryLimits, "defaultRelatedLimit" | "maxRelatedLimit">,
): number {
  const count = limit ?? limits.defaultRelatedLimit;
  if (count > limits.maxRelatedLimit)
    throw new LimitExceededError(`limit may not exceed ${limits.maxRelatedLimit}`);
  if (count < 0) throw new ValidationError("limit must not be negative");
  return count;
}
