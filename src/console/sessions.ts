import type { Database } from 'bun:sqlite';
import type { ApiKey, KeyStore } from '../auth/keys.ts';
import type { Clock } from '../lib/clock.ts';
import { randomSecret, safeEqual, sha256Hex } from '../lib/crypto.ts';

/** 32 random bytes, base64url: what a session cookie carries. */
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;
/** A session's last use is written at most this often, so reads do not each cost a write. */
export const TOUCH_INTERVAL_MS = 60_000;

interface SessionRow {
  id_hash: string;
  key_id: string;
  last_seen_at: number;
}

/**
 * Console sessions (issue 14): an opaque random id handed to the browser in a cookie, stored only
 * as its SHA-256. A session acts with its key, and only while that key is active (a revoked key
 * ends its sessions at once) and the session was used within `idleMs`.
 */
export function createSessionStore(sqlite: Database, keys: Pick<KeyStore, 'active'>, clock: Clock, idleMs: number) {
  const insert = sqlite.prepare<unknown, [string, string, number, number]>('INSERT INTO console_sessions (id_hash, key_id, created_at, last_seen_at) VALUES (?, ?, ?, ?)');
  const byHash = sqlite.prepare<SessionRow, [string]>('SELECT id_hash, key_id, last_seen_at FROM console_sessions WHERE id_hash = ?');
  const touch = sqlite.prepare<unknown, [number, string]>('UPDATE console_sessions SET last_seen_at = ? WHERE id_hash = ?');
  const remove = sqlite.prepare<unknown, [string]>('DELETE FROM console_sessions WHERE id_hash = ?');
  const sweep = sqlite.prepare<unknown, [number]>(
    'DELETE FROM console_sessions WHERE last_seen_at < ? OR key_id IN (SELECT id FROM api_keys WHERE revoked_at IS NOT NULL)',
  );

  return {
    /** A new session for an active key; returns the raw id for the cookie (never stored). Ended sessions are swept here. */
    create(keyId: string): string {
      const now = clock.now();
      sweep.run(now - idleMs);
      const raw = randomSecret(32);
      insert.run(sha256Hex(raw), keyId, now, now);
      return raw;
    },

    /** The key a live session acts with, or null (unknown, idle too long, or its key revoked: then it is deleted). */
    resolve(raw: string): ApiKey | null {
      if (!SESSION_ID.test(raw)) return null;
      const hash = sha256Hex(raw);
      const row = byHash.get(hash);
      if (!row || !safeEqual(row.id_hash, hash)) return null;
      const now = clock.now();
      const key = now - row.last_seen_at > idleMs ? null : keys.active(row.key_id);
      if (!key) {
        remove.run(hash);
        return null;
      }
      if (now - row.last_seen_at >= TOUCH_INTERVAL_MS) touch.run(now, hash);
      return key;
    },

    end(raw: string): void {
      if (SESSION_ID.test(raw)) remove.run(sha256Hex(raw));
    },
  };
}

export type SessionStore = ReturnType<typeof createSessionStore>;
