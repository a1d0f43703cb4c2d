// A value now or later: the search decides a fresh hit synchronously (no microtask on the hit path) and anything that
// waits by a promise. `whenSettled` is the one place that tells the two apart; its callers never branch on it.

/** A value now, or later by a promise. */
export type Eventually<T> = T | Promise<T>;

/**
 * `then` applied to the value: at once when it is there, else once the promise settles (and `fail` applied to its
 * rejection). A throw of `then` on a value that is there is the caller's, as it would be without this.
 */
export function whenSettled<T, U>(
  value: Eventually<T>,
  then: (value: T) => Eventually<U>,
  fail?: (err: unknown) => Eventually<U>,
): Eventually<U> {
  return value instanceof Promise ? value.then(then, fail) : then(value);
}
