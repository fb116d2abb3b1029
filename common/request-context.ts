/**
 * The request a piece of work was caused by, carried across awaits by an AsyncLocalStorage: the
 * API runs each HTTP request in one (api/http/request-context-plugin.ts), the dispatcher each
 * delivery that a request's mutation produced (dispatcher/worker.ts). The logger adds the id to
 * every line written inside one (common/log.ts), so one id finds a request's lines in both processes.
 */
import { AsyncLocalStorage } from "node:async_hooks";

export interface RequestContext {
  /** The request's id: its sane `X-Request-Id`, else one generated for it. */
  readonly requestId: string;
}

/** Longest `X-Request-Id` taken from a client; a longer one is replaced. */
export const MAX_REQUEST_ID_LENGTH = 128;

// Letters, digits and the punctuation of common id formats (UUIDs, base64, `host:seq`, `a.b.c`): nothing
// that could break a header, a log line or a shell; bounded so it cannot bloat every line it marks.
const SANE_REQUEST_ID = new RegExp(`^[A-Za-z0-9._:/+=@-]{1,${MAX_REQUEST_ID_LENGTH}}$`);

const storage = new AsyncLocalStorage<RequestContext>();

/** True when `id` (a client's `X-Request-Id`) may be used as it is. */
export function isSaneRequestId(id: string): boolean {
  return SANE_REQUEST_ID.test(id);
}

/** The client's id when sane (see isSaneRequestId), else a new one (a UUIDv7: time-ordered). */
export function requestIdFrom(header: string | null): string {
  return header !== null && isSaneRequestId(header) ? header : Bun.randomUUIDv7();
}

/**
 * Runs `work` inside `context` (none: outside any, also when called inside one); what it awaits
 * and schedules stays inside. @returns what `work` returns.
 */
export function runInRequestContext<T>(context: RequestContext | undefined, work: () => T): T {
  return storage.run(context as RequestContext, work);
}

/**
 * Runs `work` outside any request context: for what outlives the current request and must not
 * carry its id (a worker or a timer made on the way).
 */
export function runOutsideRequestContext<T>(work: () => T): T {
  return storage.exit(work);
}

/** The id of the request the current work belongs to; undefined outside any. */
export function currentRequestId(): string | undefined {
  return storage.getStore()?.requestId;
}
