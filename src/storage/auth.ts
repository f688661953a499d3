// What the auth capabilities (API keys and their last use, leads, console sessions) keep in storage,
// in their own value types: one implementation per engine (src/storage/sqlite/auth.ts,
// src/storage/postgres/auth.ts), held to the same contract by test/storage/auth-records.test.ts.
// Hashes are SHA-256 hex of a secret (never the secret); times are epoch milliseconds.
import type { KeyRecord, UsedKeyRecord } from '../auth/keys.ts';
import type { LeadQuery, LeadRecord, NewLeadRecord } from '../auth/leads.ts';
import type { SessionRecord } from '../console/sessions.ts';
import type { KeysetCursor } from '../lib/query.ts';

/** API keys (`api_keys`). Every write here empties the verified keys kept in memory (the change feed's api_keys stamp). */
export interface KeyRecords {
  add(key: KeyRecord): Promise<void>;
  /** The key stored under this hash (revoked or not), or null. */
  byHash(keyHash: string): Promise<KeyRecord | null>;
  byId(id: string): Promise<KeyRecord | null>;
  /** Marks the key revoked at `at` unless it is already (then nothing is written and its first time stays); the key as it now is, or null when there is none. */
  revoke(id: string, at: number): Promise<UsedKeyRecord | null>;
  /** Every key, revoked ones included, with its last use: oldest first (createdAt, then id). */
  list(): Promise<UsedKeyRecord[]>;
}

/** When each key was last used (`api_key_usage`, apart from api_keys so that noting a use keeps the verified keys in memory). */
export interface KeyUsageRecords {
  /** The key was used at `at`: its last use becomes the later of the stored one and `at`. Rejects when the key is gone. */
  noteUse(keyId: string, at: number): Promise<void>;
}

/** Leads (`leads`): one first lead per email (`repeatOf` null), any number of repeat sign-ups naming it. */
export interface LeadRecords {
  /** Stores `lead` as its email's first lead; null (nothing stored) when the email has one already. */
  addFirst(lead: NewLeadRecord): Promise<LeadRecord | null>;
  /**
   * Stores `lead` as a sign-up: a repeat naming its email's first lead when there is one, else the
   * first lead itself, whatever other sign-ups of the email run at the same time.
   */
  addSignUp(lead: NewLeadRecord): Promise<LeadRecord>;
  get(id: string): Promise<LeadRecord | null>;
  /** The lead whose current token has this hash, or null. */
  byTokenHash(tokenHash: string): Promise<LeadRecord | null>;
  /** Gives the lead a new token (issued at `at`, not revoked); false when there is no such lead. */
  replaceToken(id: string, tokenHash: string, at: number): Promise<boolean>;
  /** Marks the lead verified (its first verification time stays); the lead, or null when there is none. */
  verify(id: string, at: number): Promise<LeadRecord | null>;
  /** Drops the lead's token (revoked at `at`); the lead, or null when there is none. */
  revokeToken(id: string, at: number): Promise<LeadRecord | null>;
  /** Up to `limit` leads matching `query`, newest first (createdAt, then id, both descending), after the cursor's lead when there is one. */
  list(query: LeadQuery, after: KeysetCursor | null, limit: number): Promise<LeadRecord[]>;
  /** Sets the lead's first scan time to `at` unless it has one. */
  noteFirstScan(id: string, at: number): Promise<void>;
}

/** Console sessions (`console_sessions`), each acting with one key (deleted with it). */
export interface SessionRecords {
  add(session: SessionRecord): Promise<void>;
  byHash(idHash: string): Promise<SessionRecord | null>;
  /** The session was used at `at`. */
  touch(idHash: string, at: number): Promise<void>;
  remove(idHash: string): Promise<void>;
  /** Deletes the sessions last used before `idleBefore`, and those of revoked keys. */
  sweep(idleBefore: number): Promise<void>;
}

/** Everything the auth capabilities keep, on one engine. */
export interface AuthRecords {
  keys: KeyRecords;
  keyUsage: KeyUsageRecords;
  leads: LeadRecords;
  sessions: SessionRecords;
}
