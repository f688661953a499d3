/**
 * `compute` remembered per argument until the database changes (`changeStamp` moves, on any commit
 * by any process), for reads whose answer depends on the database alone. Arguments come from
 * clients, so at most `limit` answers are kept, the oldest dropped first.
 */
export function memoUntilChange<Value>(changeStamp: () => number, limit: number, compute: (argument: string) => Value): (argument: string) => Value {
  const answers = new Map<string, Value>();
  let stamp = changeStamp();
  return (argument) => {
    const now = changeStamp();
    if (now !== stamp) {
      answers.clear();
      stamp = now;
    }
    if (answers.has(argument)) return answers.get(argument)!;
    const value = compute(argument);
    if (answers.size >= limit) answers.delete(answers.keys().next().value!);
    answers.set(argument, value);
    return value;
  };
}
