// The auth records' contract (src/storage/auth.ts), on every engine under test: what the key,
// lead and session stores rely on, through the records alone (no SQL). Times are past 2^31 ms, as
// real ones are, so a column read back as anything but a JS number shows.
import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import type { KeyRecord } from '../../src/auth/keys.ts';
import type { NewLeadRecord } from '../../src/auth/leads.ts';
import type { AuthRecords } from '../../src/storage/auth.ts';
import { postgresAuthRecords } from '../../src/storage/postgres/auth.ts';
import { sqliteAuthRecords } from '../../src/storage/sqlite/auth.ts';
import { ENGINES, type OpenedEngine } from '../helpers/storage.ts';

const T0 = Date.parse('2026-05-04T10:00:00.000Z');
const MINUTE = 60_000;

const recordsOf = (opened: OpenedEngine): AuthRecords => (opened.kind === 'sqlite' ? sqliteAuthRecords(opened.database) : postgresAuthRecords(opened.client));

let serial = 0;
/** A key record; ids and hashes sort in the order they are made. */
function keyRecord(fields: Partial<KeyRecord> = {}): KeyRecord {
  const n = String(++serial).padStart(6, '0');
  return { id: `key-${n}`, name: `key ${n}`, keyHash: `hash-${n}`, keyPrefix: 'sk_live_Ab3d', scopes: ['admin'], allowedDomains: [], storeId: null, createdAt: T0, revokedAt: null, ...fields };
}

function lead(email: string, fields: Partial<NewLeadRecord> = {}): NewLeadRecord {
  const n = String(++serial).padStart(6, '0');
  return { id: `lead-${n}`, email, verified: false, verifiedAt: null, tokenHash: `token-${n}`, tokenIssuedAt: T0, createdAt: T0, ...fields };
}

describe.each(ENGINES)('auth records ($name)', (engine) => {
  let opened: OpenedEngine;
  let records: AuthRecords;
  beforeEach(async () => {
    opened = await engine.open();
    records = recordsOf(opened);
  });
  afterEach(() => opened.close());

  describe('keys', () => {
    test('a key reads back as stored, by hash and by id, its lists and nulls intact; unknown ones are null', async () => {
      const bound = keyRecord({ scopes: ['products:read'], allowedDomains: ['shop.example.com', '*.example.org'], storeId: 'store-1', name: 'widget' });
      const plain = keyRecord();
      await records.keys.add(bound);
      await records.keys.add(plain);
      expect(await records.keys.byHash(bound.keyHash)).toEqual(bound);
      expect(await records.keys.byId(plain.id)).toEqual(plain);
      expect(await records.keys.byHash('no-such-hash')).toBeNull();
      expect(await records.keys.byId('no-such-id')).toBeNull();
    });

    test('a second key with the same hash is refused, and the first stays as it was', async () => {
      const first = keyRecord();
      await records.keys.add(first);
      await expect(records.keys.add({ ...keyRecord(), keyHash: first.keyHash })).rejects.toThrow();
      expect(await records.keys.list()).toEqual([{ ...first, lastUsedAt: null }]);
    });

    test('revoking keeps the first revocation time; the key comes back with its last use; an unknown key is null', async () => {
      const key = keyRecord();
      await records.keys.add(key);
      await records.keyUsage.noteUse(key.id, T0 + MINUTE);
      expect(await records.keys.revoke(key.id, T0 + 2 * MINUTE)).toEqual({ ...key, revokedAt: T0 + 2 * MINUTE, lastUsedAt: T0 + MINUTE });
      expect(await records.keys.revoke(key.id, T0 + 3 * MINUTE)).toEqual({ ...key, revokedAt: T0 + 2 * MINUTE, lastUsedAt: T0 + MINUTE });
      expect((await records.keys.byHash(key.keyHash))?.revokedAt).toBe(T0 + 2 * MINUTE);
      expect(await records.keys.revoke('no-such-id', T0)).toBeNull();
    });

    test('the list holds every key, revoked ones too, oldest first and by id within one millisecond, each with its last use', async () => {
      const later = keyRecord({ createdAt: T0 + 1 });
      const [a, b] = [keyRecord(), keyRecord()];
      for (const key of [later, b, a]) await records.keys.add(key);
      await records.keys.revoke(b.id, T0 + 5);
      await records.keyUsage.noteUse(later.id, T0 + 9);
      expect(await records.keys.list()).toEqual([
        { ...a, lastUsedAt: null },
        { ...b, revokedAt: T0 + 5, lastUsedAt: null },
        { ...later, lastUsedAt: T0 + 9 },
      ]);
    });
  });

  describe('key usage', () => {
    test('the later time wins, whichever writer comes last', async () => {
      const key = keyRecord();
      await records.keys.add(key);
      await records.keyUsage.noteUse(key.id, T0 + MINUTE);
      await records.keyUsage.noteUse(key.id, T0);
      expect((await records.keys.list())[0]!.lastUsedAt).toBe(T0 + MINUTE);
      await records.keyUsage.noteUse(key.id, T0 + 2 * MINUTE);
      expect((await records.keys.list())[0]!.lastUsedAt).toBe(T0 + 2 * MINUTE);
    });

    test('a use of a key that is not stored is refused', async () => {
      await expect(records.keyUsage.noteUse('no-such-key', T0)).rejects.toThrow();
    });
  });

  describe('leads', () => {
    test('a first lead reads back as stored, by id and by token hash; a second first lead of its email is not stored', async () => {
      const first = lead('a@example.com', { verified: true, verifiedAt: T0 });
      const stored = { ...first, repeatOf: null, tokenRevokedAt: null, firstScanAt: null };
      expect(await records.leads.addFirst(first)).toEqual(stored);
      expect(await records.leads.addFirst(lead('a@example.com'))).toBeNull();
      expect(await records.leads.get(first.id)).toEqual(stored);
      expect(await records.leads.byTokenHash(first.tokenHash!)).toEqual(stored);
      expect(await records.leads.get('no-such-id')).toBeNull();
      expect(await records.leads.byTokenHash('no-such-hash')).toBeNull();
      expect(await records.leads.list({}, null, 10)).toEqual([stored]);
    });

    test('a sign-up of a new email is its first lead; later ones are repeats naming it, which leave it unchanged', async () => {
      const first = await records.leads.addSignUp(lead('b@example.com', { createdAt: T0 }));
      expect(first.repeatOf).toBeNull();
      const repeat = await records.leads.addSignUp(lead('b@example.com', { createdAt: T0 + 1 }));
      expect(repeat).toMatchObject({ email: 'b@example.com', repeatOf: first.id, verified: false });
      expect(await records.leads.get(first.id)).toEqual(first);
      expect(await records.leads.byTokenHash(repeat.tokenHash!)).toEqual(repeat);
      expect(await records.leads.addFirst(lead('b@example.com'))).toBeNull();
    });

    test('sign-ups of one new email at the same time: exactly one first lead, every other one a repeat naming it', async () => {
      const signUps = await Promise.all(Array.from({ length: 6 }, () => records.leads.addSignUp(lead('race@example.com'))));
      const firsts = signUps.filter((signUp) => signUp.repeatOf === null);
      expect(firsts).toHaveLength(1);
      expect(signUps.filter((signUp) => signUp.repeatOf === firsts[0]!.id)).toHaveLength(5);
      expect(await records.leads.list({}, null, 10)).toHaveLength(6);
    });

    // SQLite has one writer, so only PostgreSQL can have a sign-up find no first lead, then meet one at its insert.
    test.if(engine.name === 'postgres')('a sign-up that finds no first lead, then meets one committed meanwhile, becomes its repeat', async () => {
      if (opened.kind !== 'postgres') return;
      const { sql } = opened.client;
      const first = lead('meanwhile@example.com');
      let signUp: Promise<unknown> | null = null;
      await sql.begin(async (tx) => {
        await tx`INSERT INTO leads (id, email, verified, token_hash, token_issued_at, created_at) VALUES (${first.id}, ${first.email}, false, ${first.tokenHash}, ${T0}, ${T0})`;
        signUp = records.leads.addSignUp(lead('meanwhile@example.com'));
        // Committed only once the sign-up waits on the email's unique index.
        while (Number((await sql`SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`)[0].n) === 0) await Bun.sleep(5);
      });
      expect(await signUp).toMatchObject({ email: 'meanwhile@example.com', repeatOf: first.id });
    });

    test('a new token replaces the old one, issued at its time and not revoked; an unknown lead gets none', async () => {
      const stored = (await records.leads.addFirst(lead('c@example.com')))!;
      await records.leads.revokeToken(stored.id, T0 + 1);
      expect(await records.leads.replaceToken(stored.id, 'new-token-hash', T0 + 2)).toBe(true);
      expect(await records.leads.byTokenHash(stored.tokenHash!)).toBeNull();
      expect(await records.leads.byTokenHash('new-token-hash')).toEqual({ ...stored, tokenHash: 'new-token-hash', tokenIssuedAt: T0 + 2, tokenRevokedAt: null });
      expect(await records.leads.replaceToken('no-such-id', 'other-hash', T0)).toBe(false);
      expect(await records.leads.byTokenHash('other-hash')).toBeNull();
    });

    test('verifying keeps the first verification time; revoking drops the token and notes when; unknown leads are null', async () => {
      const stored = (await records.leads.addFirst(lead('d@example.com')))!;
      expect(await records.leads.verify(stored.id, T0 + 1)).toEqual({ ...stored, verified: true, verifiedAt: T0 + 1 });
      expect(await records.leads.verify(stored.id, T0 + 2)).toEqual({ ...stored, verified: true, verifiedAt: T0 + 1 });
      expect(await records.leads.revokeToken(stored.id, T0 + 3)).toEqual({ ...stored, verified: true, verifiedAt: T0 + 1, tokenHash: null, tokenRevokedAt: T0 + 3 });
      expect(await records.leads.byTokenHash(stored.tokenHash!)).toBeNull();
      expect(await records.leads.verify('no-such-id', T0)).toBeNull();
      expect(await records.leads.revokeToken('no-such-id', T0)).toBeNull();
    });

    test('a first scan is noted once: a later one keeps the first time', async () => {
      const stored = (await records.leads.addFirst(lead('e@example.com')))!;
      await records.leads.noteFirstScan(stored.id, T0 + 1);
      await records.leads.noteFirstScan(stored.id, T0 + 2);
      expect((await records.leads.get(stored.id))?.firstScanAt).toBe(T0 + 1);
    });

    test('the list is newest first, by id within one millisecond, and pages after a cursor without losing or repeating a lead', async () => {
      const leads = [];
      for (const [email, createdAt] of [['p1@example.com', T0], ['p2@example.com', T0 + 1], ['p3@example.com', T0 + 1], ['p4@example.com', T0 + 1], ['p5@example.com', T0 + 2]] as const) {
        leads.push((await records.leads.addFirst(lead(email, { createdAt })))!);
      }
      const newestFirst = [...leads].reverse().map((stored) => stored.email);
      expect((await records.leads.list({}, null, 10)).map((stored) => stored.email)).toEqual(newestFirst);
      const seen: string[] = [];
      let after = null;
      for (;;) {
        const page = await records.leads.list({}, after, 2);
        seen.push(...page.map((stored) => stored.email));
        if (page.length < 2) break;
        after = { at: page[1]!.createdAt, id: page[1]!.id };
      }
      expect(seen).toEqual(newestFirst);
    });

    test('the list filters by a part of the address taken literally, by verification and by whether the token is active', async () => {
      const plain = (await records.leads.addFirst(lead('ann@shop.example', { createdAt: T0 })))!;
      const verified = (await records.leads.addFirst(lead('bob@other.example', { createdAt: T0 + 1, verified: true, verifiedAt: T0 })))!;
      const revoked = (await records.leads.addFirst(lead('a_b%c@shop.example', { createdAt: T0 + 2 })))!;
      await records.leads.revokeToken(revoked.id, T0 + 3);
      const emails = async (query: Parameters<AuthRecords['leads']['list']>[0]) => (await records.leads.list(query, null, 10)).map((stored) => stored.email);
      expect(await emails({ emailContains: '@shop.example' })).toEqual([revoked.email, plain.email]);
      expect(await emails({ emailContains: '_b%' })).toEqual([revoked.email]);
      expect(await emails({ emailContains: 'a%' })).toEqual([]);
      expect(await emails({ verified: true })).toEqual([verified.email]);
      expect(await emails({ verified: false })).toEqual([revoked.email, plain.email]);
      expect(await emails({ tokenActive: true })).toEqual([verified.email, plain.email]);
      expect(await emails({ tokenActive: false })).toEqual([revoked.email]);
      expect(await emails({ emailContains: 'shop', tokenActive: true })).toEqual([plain.email]);
    });
  });

  describe('console sessions', () => {
    test('a session reads back by its hash, is touched and removed; unknown ones are null', async () => {
      const key = keyRecord();
      await records.keys.add(key);
      const session = { idHash: 'session-1', keyId: key.id, createdAt: T0, lastSeenAt: T0 };
      await records.sessions.add(session);
      expect(await records.sessions.byHash('session-1')).toEqual(session);
      await records.sessions.touch('session-1', T0 + MINUTE);
      expect(await records.sessions.byHash('session-1')).toEqual({ ...session, lastSeenAt: T0 + MINUTE });
      await records.sessions.remove('session-1');
      expect(await records.sessions.byHash('session-1')).toBeNull();
      await records.sessions.remove('session-1');
      expect(await records.sessions.byHash('no-such-hash')).toBeNull();
    });

    test('a session of a key that is not stored is refused', async () => {
      await expect(records.sessions.add({ idHash: 'orphan', keyId: 'no-such-key', createdAt: T0, lastSeenAt: T0 })).rejects.toThrow();
      expect(await records.sessions.byHash('orphan')).toBeNull();
    });

    test('the sweep deletes the sessions last used before its time and those of revoked keys, and keeps the rest', async () => {
      const [active, revoked] = [keyRecord(), keyRecord()];
      await records.keys.add(active);
      await records.keys.add(revoked);
      const sessions = [
        { idHash: 'idle', keyId: active.id, createdAt: T0, lastSeenAt: T0 - 1 },
        { idHash: 'at-the-limit', keyId: active.id, createdAt: T0, lastSeenAt: T0 },
        { idHash: 'fresh', keyId: active.id, createdAt: T0, lastSeenAt: T0 + MINUTE },
        { idHash: 'of-a-revoked-key', keyId: revoked.id, createdAt: T0, lastSeenAt: T0 + MINUTE },
      ];
      for (const session of sessions) await records.sessions.add(session);
      await records.keys.revoke(revoked.id, T0);
      await records.sessions.sweep(T0);
      const left = [];
      for (const session of sessions) if (await records.sessions.byHash(session.idHash)) left.push(session.idHash);
      expect(left).toEqual(['at-the-limit', 'fresh']);
    });
  });
});
