import type { ApiKey, KeyStore } from '../auth/keys.ts';
import type { Clock } from '../lib/clock.ts';
import { randomSecret, safeEqual, sha256Hex } from '../lib/crypto.ts';
import type { SessionRecords } from '../storage/auth.ts';

/** 32 random bytes, base64url: what a session cookie carries. */
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;
/** A session's last use is written at most this often, so reads do not each cost a write. */
export const TOUCH_INTERVAL_MS = 60_000;

/** A console session as storage keeps it (src/storage/auth.ts): the SHA-256 of its id, never the id; times in epoch ms. */
export interface SessionRecord {
  idHash: string;
  keyId: string;
  createdAt: number;
  lastSeenAt: number;
}

/**
 * Console sessions (issue 14): an opaque random id handed to the browser in a cookie, stored only
 * as its SHA-256. A session acts with its key, and only while that key is active (a revoked key
 * ends its sessions at once) and the session was used within `idleMs`.
 */
export function createSessionStore(sessions: SessionRecords, keys: Pick<KeyStore, 'active'>, clock: Clock, idleMs: number) {
  return {
    /** A new session for an active key; returns the raw id for the cookie (never stored). Ended sessions are swept here. */
    async create(keyId: string): Promise<string> {
      const now = clock.now();
      await sessions.sweep(now - idleMs);
      const raw = randomSecret(32);
      await sessions.add({ idHash: sha256Hex(raw), keyId, createdAt: now, lastSeenAt: now });
      return raw;
    },

    /** The key a live session acts with, or null (unknown, idle too long, or its key revoked: then it is deleted). */
    async resolve(raw: string): Promise<ApiKey | null> {
      if (!SESSION_ID.test(raw)) return null;
      const hash = sha256Hex(raw);
      const session = await sessions.byHash(hash);
      if (!session || !safeEqual(session.idHash, hash)) return null;
      const now = clock.now();
      const key = now - session.lastSeenAt > idleMs ? null : await keys.active(session.keyId);
      if (!key) {
        await sessions.remove(hash);
        return null;
      }
      if (now - session.lastSeenAt >= TOUCH_INTERVAL_MS) await sessions.touch(hash, now);
      return key;
    },

    async end(raw: string): Promise<void> {
      if (SESSION_ID.test(raw)) await sessions.remove(sha256Hex(raw));
    },
  };
}

export type SessionStore = ReturnType<typeof createSessionStore>;
