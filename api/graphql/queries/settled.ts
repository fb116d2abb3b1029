/**
 * The embedded store answers within the call: its promises are already settled
 * when they are returned. Reading them at once (`Bun.peek`) lets a resolver
 * answer synchronously, which spares graphql-jit a promise per row; a pending
 * or rejected promise (a networked engine, a failure) goes the usual way.
 */
export function whenSettled<T, R>(promise: Promise<T>, then: (value: T) => R): R | Promise<R> {
  return Bun.peek.status(promise) === "fulfilled" ? then(Bun.peek(promise) as T) : promise.then(then);
}
