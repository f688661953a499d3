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

/**
 * How long a group writing a backlog (entries queued before the last turn) goes on taking entries,
 * counted from its first write. Its COMMIT adds about half as much again (measured on scans: 25–40%
 * of a group's time), so a group holds the event loop about 2 ms, and the rest of the backlog waits
 * for the next turn (issue 12, item 5: no stretch over 5 ms).
 */
export const GROUP_SLICE_MS = 1.25;

/**
 * The time budget of a group committed from a queue one group per turn of the event loop. Set
 * `floor` before each group: the size that arrived during the turn before it, which the group takes
 * however long it writes, then one entry more, so a backlog shrinks at any rate of arrivals; past
 * that it takes entries only within GROUP_SLICE_MS. The group's transaction calls `start` as it
 * begins (again when written over after a refused entry) and asks `takes` before each entry; the
 * entries not taken come back from commitGroup as `left`, for the caller to put back at the head
 * of its queue and commit in the next turn.
 */
export function groupSlice() {
  let started = 0;
  let taken = 0;
  let pastFloor = 0;
  const slice = {
    floor: 0,
    start(): void {
      started = performance.now();
      taken = 0;
      pastFloor = 0;
    },
    /** Whether the group takes its next entry, of `size` (the unit of `floor`). */
    takes(size: number): boolean {
      if (taken >= slice.floor && pastFloor++ > 0 && performance.now() - started >= GROUP_SLICE_MS) return false;
      taken += size;
      return true;
    },
  };
  return slice;
}
