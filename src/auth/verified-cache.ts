import type { MaybePromise } from '../lib/maybe-promise.ts';

/**
 * What secrets (API keys, lead tokens) verified as, kept in memory by the secret's SHA-256 (never by
 * the secret itself; the same lookup the database's index makes) until `tableStamp` moves (the
 * storage's change feed, src/storage/changes.ts: a write to the table by this process or any other,
 * such as the CLI revoking a key), so the telemetry requests of a busy key no longer send it back to
 * the database every time. A secret found in memory is answered without a promise; only a lookup
 * that must ask storage waits. Only secrets that verified are kept, so made-up ones add nothing, and
 * at most `limit`, the oldest dropped first.
 *
 * A lookup is kept only when the stamp did not move while storage answered it: a revocation that
 * commits during the read may have come after what the read saw. This also covers a lookup made
 * inside a SQLite transaction (always a synchronous callback, so its answer is taken after the
 * transaction ended): the stamp moved with a write of the table made there and moves back when the
 * transaction rolls back, so what the lookup read after that write is kept only if it committed.
 */
export function createVerifiedCache<Value>(tableStamp: () => string, limit: number) {
  const entries = new Map<string, Value>();
  let stamp = tableStamp();
  return {
    /** The value `hash` verified as, from memory while the table is unchanged, else from `verify` (null: refused, not kept). */
    get(hash: string, verify: () => Promise<Value | null>): MaybePromise<Value | null> {
      const moved = tableStamp();
      if (moved !== stamp) {
        stamp = moved;
        entries.clear();
      }
      const known = entries.get(hash);
      if (known !== undefined) return known;
      const readAt = moved;
      return verify().then((value) => {
        if (value === null) return value;
        if (tableStamp() !== readAt || stamp !== readAt) return value;
        if (entries.size >= limit) entries.delete(entries.keys().next().value!);
        entries.set(hash, value);
        return value;
      });
    },
  };
}
