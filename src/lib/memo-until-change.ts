import type { MaybePromise } from './maybe-promise.ts';

/**
 * `compute` remembered per argument until the database changes (`changeStamp` moves, on any commit
 * by any process), for reads whose answer depends on the database alone. Arguments come from
 * clients, so at most `limit` answers are kept, the oldest dropped first. An answer that comes with
 * a promise (storage had to be asked: PostgreSQL) is kept once it has come, and only if the stamp did
 * not move meanwhile (it may have been read before that commit); a failed one is not kept.
 */
export function memoUntilChange<Value>(changeStamp: () => number, limit: number, compute: (argument: string) => MaybePromise<Value>): (argument: string) => MaybePromise<Value> {
  const answers = new Map<string, Value>();
  let stamp = changeStamp();
  const keep = (argument: string, value: Value) => {
    if (answers.size >= limit) answers.delete(answers.keys().next().value!);
    answers.set(argument, value);
  };
  const current = () => {
    const now = changeStamp();
    if (now !== stamp) {
      answers.clear();
      stamp = now;
    }
    return now;
  };
  return (argument) => {
    const asked = current();
    if (answers.has(argument)) return answers.get(argument)!;
    const value = compute(argument);
    if (!(value instanceof Promise)) {
      keep(argument, value);
      return value;
    }
    return value.then((late) => {
      if (current() === asked) keep(argument, late);
      return late;
    });
  };
}
