/** Thrown out of a group's transaction (rolling all of it back) when one entry fails on its own. */
export class EntryFailed {
  constructor(
    readonly index: number,
    readonly error: unknown,
  ) {}
}

/**
 * One transaction for a whole group of entries (group commit), where one entry's failure never
 * fails the others: `transaction` (a bun:sqlite transaction over the group) throws EntryFailed for an
 * entry whose own writes failed, which rolls the group back; that entry goes to `refuse` and the
 * rest are applied again without it (no savepoint per entry: they cost more than the rare retry).
 * Returns the entries committed, with their results in order; a failure of the transaction as a
 * whole (its COMMIT) is thrown, and then nothing was kept.
 */
export function commitGroup<Entry, Result>(
  group: Entry[],
  transaction: (group: Entry[]) => Result[],
  refuse: (entry: Entry, error: unknown) => void,
): { committed: Entry[]; results: Result[] } {
  let entries = group;
  while (entries.length > 0) {
    try {
      return { committed: entries, results: transaction(entries) };
    } catch (failure) {
      if (!(failure instanceof EntryFailed)) throw failure;
      refuse(entries[failure.index]!, failure.error);
      entries = entries.filter((_, i) => i !== failure.index);
    }
  }
  return { committed: [], results: [] };
}
