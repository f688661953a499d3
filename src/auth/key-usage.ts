import type { Clock } from '../lib/clock.ts';
import type { KeyUsageRecords } from '../storage/auth.ts';

/** A key's last use is written at most this often: the time shown is its last use to within this. */
export const KEY_USE_INTERVAL_MS = 60_000;

/**
 * When API keys were last used (`api_key_usage`), for the key listing. Keys authenticate every
 * admin, dashboard, widget and signed telemetry request, so a use is written only when the key's
 * last write is KEY_USE_INTERVAL_MS old or more (or this process has not written it yet): one
 * write per key per minute at most, however busy the key. The times written are kept in memory for
 * at most `limit` keys, the longest unwritten dropped first (a dropped key is written again at its
 * next use, a minute early at worst). The write is not waited for, and one that fails is not retried
 * before the interval: the time is advisory, and the request it came with must not fail or wait.
 */
export function createKeyUsage(records: KeyUsageRecords, clock: Clock, limit: number) {
  /** Key id -> when its use was last written, oldest first. */
  const written = new Map<string, number>();
  // The key was deleted meanwhile, or the database is busy or read-only: the next use past the interval tries again.
  const ignore = () => {};

  return {
    /** Notes that the key `keyId` authenticated a request now. */
    used(keyId: string): void {
      const now = clock.now();
      const last = written.get(keyId);
      if (last !== undefined && now - last < KEY_USE_INTERVAL_MS) return;
      written.delete(keyId);
      if (written.size >= limit) written.delete(written.keys().next().value!);
      written.set(keyId, now);
      records.noteUse(keyId, now).catch(ignore);
    },
  };
}

export type KeyUsage = ReturnType<typeof createKeyUsage>;
