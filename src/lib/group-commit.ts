/** Thrown out of a group's transaction (rolling all of it back) when one entry fails on its own. */
export class EntryFailed {
  constructor(
    readonly index: number,
    readonly error: unknown,
  ) {}
}

export interface GroupOutcome<Entry> {
  /** An entry whose own writes failed: it is left out of the group, which is written again without it. */
  refuse(entry: Entry, error: unknown): void;
  /**
   * The transaction as a whole failed (its COMMIT): nothing of it was kept. Called once, with the
   * entries not already refused, so each failed entry is reported exactly once.
   */
  fail(entries: Entry[], error: unknown): void;
}

/**
 * One transaction for a whole group of entries (group commit), where one entry's failure never
 * fails the others: `transaction` (a bun:sqlite transaction over the group) throws EntryFailed for an
 * entry whose own writes failed, which rolls the group back; that entry is refused and the rest are
 * applied again without it (no savepoint per entry: they cost more than the rare retry).
 *
 * `transaction` may stop early (a time budget) and return the results of the first entries only:
 * those are committed, the others come back as `left`, in order, for the caller to commit next.
 * Returns the entries committed, with their results in order.
 */
export function commitGroup<Entry, Result>(
  group: Entry[],
  transaction: (group: Entry[]) => Result[],
  { refuse, fail }: GroupOutcome<Entry>,
): { committed: Entry[]; results: Result[]; left: Entry[] } {
  let entries = group;
  while (entries.length > 0) {
    let results: Result[];
    try {
      results = transaction(entries);
    } catch (failure) {
      if (failure instanceof EntryFailed) {
        refuse(entries[failure.index]!, failure.error);
        entries = entries.filter((_, i) => i !== failure.index);
        continue;
      }
      fail(entries, failure);
      break;
    }
    return { committed: entries.slice(0, results.length), results, left: entries.slice(results.length) };
  }
  return { committed: [], results: [], left: [] };
}
