import type { MaybePromise } from './maybe-promise.ts';

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

/** What a group commit wrote: the entries committed with their results in order, and those left for the next group. */
export interface Committed<Entry, Result> {
  committed: Entry[];
  results: Result[];
  left: Entry[];
}

/**
 * One transaction for a whole group of entries (group commit), where one entry's failure never
 * fails the others: `transaction` (one transaction over the group) throws EntryFailed for an entry
 * whose own writes failed, which rolls the group back; that entry is refused and the rest are
 * applied again without it (no savepoint per entry: they cost more than the rare retry).
 *
 * `transaction` may stop early (a time budget) and return the results of the first entries only:
 * those are committed, the others come back as `left`, in order, for the caller to commit next.
 * Returns the entries committed, with their results in order: at once over a synchronous
 * transaction (bun:sqlite's), as a promise over one that answers with a promise (a records method
 * that runs its transaction inside, which then rejects with EntryFailed).
 */
export function commitGroup<Entry, Result>(group: Entry[], transaction: (group: Entry[]) => Result[], outcome: GroupOutcome<Entry>): Committed<Entry, Result>;
export function commitGroup<Entry, Result>(group: Entry[], transaction: (group: Entry[]) => Promise<Result[]>, outcome: GroupOutcome<Entry>): Promise<Committed<Entry, Result>>;
export function commitGroup<Entry, Result>(group: Entry[], transaction: (group: Entry[]) => MaybePromise<Result[]>, outcome: GroupOutcome<Entry>): MaybePromise<Committed<Entry, Result>>;
export function commitGroup<Entry, Result>(group: Entry[], transaction: (group: Entry[]) => MaybePromise<Result[]>, { refuse, fail }: GroupOutcome<Entry>): MaybePromise<Committed<Entry, Result>> {
  const nothing: Committed<Entry, Result> = { committed: [], results: [], left: [] };
  /** The entries to write again after the transaction over `entries` failed, or null when none is. */
  const retried = (entries: Entry[], failure: unknown): Entry[] | null => {
    if (!(failure instanceof EntryFailed)) {
      fail(entries, failure);
      return null;
    }
    refuse(entries[failure.index]!, failure.error);
    return entries.filter((_, i) => i !== failure.index);
  };
  const written = (entries: Entry[], results: Result[]): Committed<Entry, Result> => ({ committed: entries.slice(0, results.length), results, left: entries.slice(results.length) });
  const attempt = (first: Entry[]): MaybePromise<Committed<Entry, Result>> => {
    for (let entries: Entry[] | null = first; entries !== null && entries.length > 0; ) {
      const tried: Entry[] = entries;
      let results: MaybePromise<Result[]>;
      try {
        results = transaction(tried);
      } catch (failure) {
        entries = retried(tried, failure);
        continue;
      }
      if (!(results instanceof Promise)) return written(tried, results);
      return results.then(
        (answered) => written(tried, answered),
        (failure) => {
          const rest = retried(tried, failure);
          return rest === null ? nothing : attempt(rest);
        },
      );
    }
    return nothing;
  };
  return attempt(group);
}

/**
 * How long a group writing a backlog (entries queued before the last turn) goes on taking entries,
 * counted from its first write. Its COMMIT adds about half as much again (measured on scans: 25–40%
 * of a group's time), so a group holds the event loop about 2 ms, and the rest of the backlog waits
 * for the next turn (issue 12, item 5: no stretch over 5 ms).
 */
export const GROUP_SLICE_MS = 1.25;

/** A group's time budget (groupSlice): started as its transaction begins, asked before each entry. */
export interface GroupSlice {
  /** The entries the group takes however long it writes: those that arrived during the turn before it. */
  floor: number;
  start(): void;
  /** Whether the group takes its next entry, of `size` (the unit of `floor`). */
  takes(size: number): boolean;
}

/**
 * The time budget of a group committed from a queue one group per turn of the event loop. Set
 * `floor` before each group: the size that arrived during the turn before it, which the group takes
 * however long it writes, then one entry more, so a backlog shrinks at any rate of arrivals; past
 * that it takes entries only within GROUP_SLICE_MS. The group's transaction calls `start` as it
 * begins (again when written over after a refused entry) and asks `takes` before each entry; the
 * entries not taken come back from commitGroup as `left`, for the caller to put back at the head
 * of its queue and commit in the next turn.
 */
export function groupSlice(): GroupSlice {
  let started = 0;
  let taken = 0;
  let pastFloor = 0;
  const slice: GroupSlice = {
    floor: 0,
    start(): void {
      started = performance.now();
      taken = 0;
      pastFloor = 0;
    },
    takes(size: number): boolean {
      if (taken >= slice.floor && pastFloor++ > 0 && performance.now() - started >= GROUP_SLICE_MS) return false;
      taken += size;
      return true;
    },
  };
  return slice;
}

/**
 * A group's entries applied one by one inside its transaction, as long as `slice` takes them
 * (started first): the results of those taken, in order. An entry whose `apply` fails is thrown as
 * EntryFailed with its index (commitGroup then writes the group again without it). Synchronous
 * when `apply` is (bun:sqlite's transactions must be), else a promise.
 */
export function applyEach<Entry, Result>(group: Entry[], slice: GroupSlice, apply: (entry: Entry) => Promise<Result>): Promise<Result[]>;
export function applyEach<Entry, Result>(group: Entry[], slice: GroupSlice, apply: (entry: Entry) => Result): Result[];
export function applyEach<Entry, Result>(group: Entry[], slice: GroupSlice, apply: (entry: Entry) => MaybePromise<Result>): MaybePromise<Result[]> {
  slice.start();
  const results: Result[] = [];
  const failed = (error: unknown): never => {
    throw new EntryFailed(results.length, error);
  };
  const rest = (): MaybePromise<Result[]> => {
    while (results.length < group.length && slice.takes(1)) {
      let result: MaybePromise<Result>;
      try {
        result = apply(group[results.length]!);
      } catch (error) {
        return failed(error);
      }
      if (result instanceof Promise) {
        return result.then((applied) => {
          results.push(applied);
          return rest();
        }, failed);
      }
      results.push(result);
    }
    return results;
  };
  return rest();
}

