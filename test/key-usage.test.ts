import { afterEach, describe, expect, test } from 'bun:test';
import { createKeyUsage, KEY_USE_INTERVAL_MS } from '../src/auth/key-usage.ts';
import { fixedClock, type Clock } from '../src/lib/clock.ts';
import type { KeyUsageRecords } from '../src/storage/auth.ts';
import type { Storage } from '../src/storage/index.ts';
import { sqliteAuthRecords } from '../src/storage/sqlite/auth.ts';
import { writePause } from '../src/storage/sqlite/write-pause.ts';
import { bearer, jsonRequest, makeTestApp, type TestApp } from './helpers/app.ts';
import { testSqliteOnly } from './helpers/engine.ts';
import { signedInit, scanPayload, TELEMETRY } from './helpers/probe.ts';
import { seedStore } from './helpers/signals.ts';

// When each API key was last used (GET /api/v1/admin/keys, svc keys list): noted on every request
// a key authenticates, written at most once a minute per key, into a table of its own.
const T0 = Date.parse('2026-05-04T10:00:00.000Z');
let t: TestApp;
afterEach(() => t?.close());

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Key-use records that count the writes they are asked for and can be waited for: on SQLite a use
 * is written within the call, on PostgreSQL after the answer of the request that made it.
 */
function watchedUses() {
  const pending = new Set<Promise<unknown>>();
  let writes = 0;
  const watch = (records: KeyUsageRecords): KeyUsageRecords => ({
    noteUse(keyId, at) {
      writes++;
      const write = records.noteUse(keyId, at);
      pending.add(write);
      write.then(
        () => pending.delete(write),
        () => pending.delete(write),
      );
      return write;
    },
  });
  return {
    watch,
    /** The app's storage with its key uses watched (makeTestApp's `storage`). */
    around: (storage: Storage): Storage => ({ ...storage, auth: { ...storage.auth, keyUsage: watch(storage.auth.keyUsage) } }),
    writes: () => writes,
    /** Once every write asked for so far has answered. */
    written: async () => void (await Promise.allSettled([...pending])),
  };
}
let uses: ReturnType<typeof watchedUses>;

async function appAt(clock: Clock): Promise<void> {
  uses = watchedUses();
  t = await makeTestApp({ clock, storage: uses.around });
}

/** lastUsedAt of every key by name, as the admin API lists them (that request is a use of `admin`, written before the list is read). */
async function lastUses(admin: string): Promise<Record<string, string | null>> {
  expect((await t.request('/api/v1/admin/keys', { headers: bearer(admin) })).status).toBe(200);
  await uses.written();
  const res = await t.request('/api/v1/admin/keys', { headers: bearer(admin) });
  expect(res.status).toBe(200);
  const { items } = (await res.json()) as { items: { name: string; lastUsedAt: string | null }[] };
  return Object.fromEntries(items.map((key) => [key.name, key.lastUsedAt]));
}


describe('last use of API keys', () => {
  test('a key is noted as used when it authenticates a request: admin bearer, console session, signed telemetry, widget', async () => {
    const clock = fixedClock(T0);
    await appAt(clock);
    const admin = (await t.keys.create({ name: 'admin', scopes: ['admin'] })).key;
    const consoleKey = (await t.keys.create({ name: 'console', scopes: ['dashboard:read'] })).key;
    const probe = (await t.keys.create({ name: 'probe', scopes: ['probe:scan'] })).key;
    const storeId = await seedStore(t, 'platform-a', 'usage.myplatform-a.com');
    const widget = (await t.keys.create({ name: 'widget', scopes: ['products:read'], allowedDomains: ['shop.usage.test'], storeId })).key;
    await t.keys.create({ name: 'idle', scopes: ['dashboard:read'] });
    const revoked = await t.keys.create({ name: 'revoked', scopes: ['admin'] });
    await t.keys.revoke(revoked.record.id);
    expect(await lastUses(admin)).toEqual({ admin: iso(T0), console: null, probe: null, widget: null, idle: null, revoked: null });

    // Signing in is a use; so is each request of the session, which acts with the key.
    const signIn = await t.request('/api/v1/console/session', jsonRequest('POST', { key: consoleKey }, { origin: t.config.baseUrl }));
    expect(signIn.status).toBe(201);
    const cookie = signIn.headers.get('set-cookie')!.split(';')[0]!;
    clock.advance(KEY_USE_INTERVAL_MS);
    expect((await t.request('/api/v1/dashboard/scans', { headers: { cookie } })).status).toBe(200);

    clock.advance(KEY_USE_INTERVAL_MS);
    const body = JSON.stringify(scanPayload());
    expect((await t.request(TELEMETRY, signedInit(probe, body, clock.now()))).status).toBe(204);

    clock.advance(KEY_USE_INTERVAL_MS);
    const faqs = () => t.request('/api/v1/public/faqs?type=product&ref=1', { headers: { 'x-api-key': widget, origin: 'https://shop.usage.test' } });
    expect((await faqs()).status).toBe(200);

    // A revoked key is refused, not used.
    expect((await t.request('/api/v1/admin/keys', { headers: bearer(revoked.key) })).status).toBe(401);
    expect(await lastUses(admin)).toEqual({
      admin: iso(T0 + 3 * KEY_USE_INTERVAL_MS),
      console: iso(T0 + KEY_USE_INTERVAL_MS),
      probe: iso(T0 + 2 * KEY_USE_INTERVAL_MS),
      widget: iso(T0 + 3 * KEY_USE_INTERVAL_MS),
      idle: null,
      revoked: null,
    });
  });

  test('a widget key whose answer comes from the widget’s answer cache (each of its three ways) is still used', async () => {
    const clock = fixedClock(T0);
    await appAt(clock);
    const admin = (await t.keys.create({ name: 'admin', scopes: ['admin'] })).key;
    const storeId = await seedStore(t, 'platform-a', 'usage.myplatform-a.com');
    const widget = (await t.keys.create({ name: 'widget', scopes: ['products:read'], allowedDomains: ['shop.usage.test'], storeId })).key;
    const faqs = async (times: number) => {
      for (let i = 0; i < times; i++) {
        const res = await t.request('/api/v1/public/faqs?type=product&ref=1', { headers: { 'x-api-key': widget, origin: 'https://shop.usage.test' } });
        expect(res.status).toBe(200);
        // As on SQLite, a use written is a commit the next answer has heard of.
        await uses.written();
        await t.changesHeard();
      }
    };
    // A written use is a commit, after which the next answer verifies the key again and is cached;
    // then come the answer for a new origin, for a known origin, and the repeat of the last answer.
    await faqs(1);
    for (const [way, warmUp] of [['new origin', 1], ['known origin', 2], ['repeat', 3]] as const) {
      await faqs(warmUp);
      clock.advance(KEY_USE_INTERVAL_MS);
      await faqs(1);
      expect({ way, lastUsedAt: (await lastUses(admin)).widget }).toEqual({ way, lastUsedAt: iso(clock.now()) });
    }
  });

  test('a key’s use is written at most once a minute: uses within the minute write nothing', async () => {
    const clock = fixedClock(T0);
    await appAt(clock);
    const admin = (await t.keys.create({ name: 'admin', scopes: ['admin'] })).key;
    const stores = () => t.request('/api/v1/admin/stores', { headers: bearer(admin) });
    expect((await stores()).status).toBe(200);
    clock.advance(KEY_USE_INTERVAL_MS - 1);
    const before = uses.writes();
    for (let i = 0; i < 5; i++) expect((await stores()).status).toBe(200);
    expect(uses.writes()).toBe(before);
    expect((await lastUses(admin)).admin).toBe(iso(T0));
    clock.advance(1);
    expect((await stores()).status).toBe(200);
    expect(uses.writes()).toBe(before + 1);
    expect((await lastUses(admin)).admin).toBe(iso(T0 + KEY_USE_INTERVAL_MS));
  });

  test('a use is written outside api_keys, so the keys verified in memory stay there', async () => {
    const clock = fixedClock(T0);
    await appAt(clock);
    const admin = (await t.keys.create({ name: 'admin', scopes: ['admin'] })).key;
    // The stamp the verified-key cache reads: it moves with every write to api_keys.
    const apiKeyWrites = t.storage.changes.tableStamp(['api_keys']);
    await t.changesHeard();
    const before = apiKeyWrites();
    const used = uses.writes();
    expect((await t.request('/api/v1/admin/stores', { headers: bearer(admin) })).status).toBe(200);
    await uses.written();
    await t.changesHeard();
    expect(uses.writes()).toBe(used + 1);
    expect(Number((await t.query('SELECT count(*) AS n FROM api_key_usage'))[0]!.n)).toBe(1);
    expect(apiKeyWrites()).toBe(before);
  });
});

describe('the last-use writer', () => {
  /** The key-use records of the app's database, watched (on SQLite each use is written before `used` returns, unless it waits). */
  const records = () => uses.watch(t.storage.auth.keyUsage);
  /** The key's last use as stored, once every write asked for has answered. */
  const usageOf = async (id: string) => {
    await uses.written();
    const [row] = await t.query('SELECT last_used_at AS at FROM api_key_usage WHERE key_id = ?', id);
    return row === undefined ? null : Number(row.at);
  };

  test('keeps the times of at most its limit of keys: a key dropped from memory is written again at its next use', async () => {
    const clock = fixedClock(T0);
    await appAt(clock);
    const [a, b, c] = await Promise.all(['a', 'b', 'c'].map(async (name) => (await t.keys.create({ name, scopes: ['admin'] })).record.id));
    const usage = createKeyUsage(records(), clock, 2);
    usage.used(a!);
    usage.used(b!);
    clock.advance(1000);
    usage.used(c!); // a, the longest unwritten, leaves memory
    usage.used(a!);
    usage.used(c!);
    expect([await usageOf(a!), await usageOf(b!), await usageOf(c!)]).toEqual([T0 + 1000, T0, T0 + 1000]);
  });

  testSqliteOnly("SQLite's write pause (its WAL checkpointer) and a transaction of the app's own connection; PostgreSQL has neither", 'waits out a write pause, and another transaction of its connection: never written inside it (its rollback would lose the time)', async () => {
    const clock = fixedClock(T0);
    await appAt(clock);
    const id = (await t.keys.create({ name: 'a', scopes: ['admin'] })).record.id;
    // SQLite's records, whose writes happen within the call unless they wait; read at once.
    const usage = createKeyUsage(sqliteAuthRecords(t.database).keyUsage, clock, 10);
    const usageOf = (keyId: string) => t.database.sqlite.query<{ at: number }, [string]>('SELECT last_used_at AS at FROM api_key_usage WHERE key_id = ?').get(keyId)?.at ?? null;
    const pause = writePause(t.database.sqlite);
    pause.pause();
    usage.used(id);
    expect(usageOf(id)).toBeNull();
    pause.resume();
    expect(usageOf(id)).toBe(T0);

    clock.advance(KEY_USE_INTERVAL_MS);
    t.database.sqlite.run('BEGIN');
    usage.used(id);
    t.database.sqlite.run('ROLLBACK');
    usage.used(id);
    await Bun.sleep(0);
    expect(usageOf(id)).toBe(T0 + KEY_USE_INTERVAL_MS);
  });

  test('keeps the latest time when writers disagree', async () => {
    const clock = fixedClock(T0);
    await appAt(clock);
    const id = (await t.keys.create({ name: 'a', scopes: ['admin'] })).record.id;
    createKeyUsage(records(), clock, 10).used(id);
    createKeyUsage(records(), fixedClock(T0 - KEY_USE_INTERVAL_MS), 10).used(id);
    expect(await usageOf(id)).toBe(T0);
  });
});
