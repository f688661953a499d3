/**
 * A value now, or a promise of it: what a cache in front of the storage returns (the value on a
 * hit, a promise only when it must ask the database). Callers on hot paths go on synchronously when
 * they got the value, so a hit costs no promise and no turn of the event loop.
 */
export type MaybePromise<T> = T | Promise<T>;

/**
 * `next(value)` at once when `value` is here, else once it is: what throws in `next` is thrown, or
 * rejects the promise, as `next` ran.
 */
export function andThen<T, U>(value: MaybePromise<T>, next: (value: T) => MaybePromise<U>): MaybePromise<U> {
  return value instanceof Promise ? value.then(next) : next(value);
}

/** Both values: at once when both are here, else a promise of both. */
export function both<A, B>(first: MaybePromise<A>, second: MaybePromise<B>): MaybePromise<[A, B]> {
  return first instanceof Promise || second instanceof Promise ? Promise.all([first, second]) : [first, second];
}
