/**
 * The embedded store answers within the call: its promises are already settled
 * when they are returned. Reading them at once (`Bun.peek`) spares the caller a
 * turn of the microtask queue — behind every other continuation queued there —
 * per call; a pending or rejected promise (a networked engine, a failure) goes
 * the usual way.
 */

/** Returned by `valueNow` for a promise that has not fulfilled (yet): await it then. */
export const NOT_YET: unique symbol = Symbol("not yet");

/** The value of a promise that has already fulfilled; NOT_YET otherwise. */
export function valueNow<T>(promise: Promise<T>): T | typeof NOT_YET {
  return Bun.peek.status(promise) === "fulfilled" ? (Bun.peek(promise) as T) : NOT_YET;
}

/** `then` applied to the promise's value: at once when it has fulfilled, else when it does. */
export function whenSettled<T, R>(promise: Promise<T>, then: (value: T) => R): R | Promise<R> {
  const value = valueNow(promise);
  return value === NOT_YET ? promise.then(then) : then(value);
}
