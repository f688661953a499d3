import { Database } from 'bun:sqlite';
import { afterEach, describe, expect, test } from 'bun:test';
import path from 'node:path';
import { createVerifiedCache } from '../src/auth/verified-cache.ts';
import { createRecordRetention } from '../src/retention/records.ts';
import { createTableWriteStamp } from '../src/storage/sqlite/table-writes.ts';
import { fixedClock } from '../src/lib/clock.ts';
import { DAY_MS } from '../src/lib/time.ts';
import { bearer, makeTestApp, tempDir, type TestApp } from './helpers/app.ts';
import { TELEMETRY, scanPayload, tokenInit } from './helpers/probe.ts';

// Issue 12 item 3: verified keys and lead tokens are kept in memory (src/auth/verified-cache.ts), yet
// a revocation, rotation or deletion, whoever commits it, is refused on the very next request. Each
// credential is used first, so the refusal comes from a cache that held it. The revocation by the
// CLI in another process is test/e2e/revocation.test.ts.
const NOW = Date.parse('2026-03-01T12:00:00Z');
let t: TestApp;
afterEach(async () => {
  await t?.close();
});

const dashboard = (key: string) => t.request('/api/v1/dashboard/scans', { headers: bearer(key) });
const probe = (token: string) => t.request(TELEMETRY, tokenInit(token, scanPayload()));

describe('verified keys kept in memory', () => {
  test('a key revoked through the admin API is refused on the next request', async () => {
    t = await makeTestApp();
    const { key, record } = await t.keys.create({ name: 'dash', scopes: ['dashboard:read'] });
    expect((await dashboard(key)).status).toBe(200);
    expect((await dashboard(key)).status).toBe(200);
    expect((await t.request(`/api/v1/admin/keys/${record.id}`, { method: 'DELETE', headers: bearer(await t.keyWith('admin')) })).status).toBe(200);
    expect((await dashboard(key)).status).toBe(401);
  });

  test('a key revoked by another database connection is refused on the next request', async () => {
    t = await makeTestApp();
    const { key, record } = await t.keys.create({ name: 'dash', scopes: ['dashboard:read'] });
    expect((await dashboard(key)).status).toBe(200);
    await t.commitElsewhere('UPDATE api_keys SET revoked_at = ? WHERE id = ?', Date.now(), record.id);
    expect((await dashboard(key)).status).toBe(401);
  });

  test("a key whose scopes another connection narrowed is refused the scope on the next request", async () => {
    t = await makeTestApp();
    const { key, record } = await t.keys.create({ name: 'dash', scopes: ['dashboard:read'] });
    expect((await dashboard(key)).status).toBe(200);
    await t.commitElsewhere(`UPDATE api_keys SET scopes = '["metrics:read"]' WHERE id = ?`, record.id);
    expect((await dashboard(key)).status).toBe(403);
  });
});

describe('leads found by token kept in memory', () => {
  test('a lead token revoked or rotated is refused on the next probe request', async () => {
    t = await makeTestApp();
    const revoked = await t.leads.create('revoked@example.com', true);
    expect((await probe(revoked.apiToken)).status).toBe(204);
    await t.leads.revoke(revoked.lead.id);
    expect((await probe(revoked.apiToken)).status).toBe(401);

    const rotated = await t.leads.create('rotated@example.com', true);
    expect((await probe(rotated.apiToken)).status).toBe(204);
    const fresh = (await t.leads.rotate(rotated.lead.id))!;
    expect((await probe(rotated.apiToken)).status).toBe(401);
    expect((await probe(fresh)).status).toBe(204);
  });

  test('a lead verified after its token was first used counts as verified on the next request', async () => {
    t = await makeTestApp();
    const { lead, apiToken } = await t.leads.create('later@example.com');
    const tierOf = async () => (await probe(apiToken)).headers.get('ratelimit-policy');
    expect(await tierOf()).toStartWith('"anonymous"');
    await t.leads.verify(lead.id);
    expect(await tierOf()).toStartWith('"authed"');
  });

  test('an unused sign-up that expired (record retention deleted it) is refused on the next request', async () => {
    const clock = fixedClock(NOW);
    t = await makeTestApp({ clock });
    const { apiToken } = await t.leads.create('expired@example.com');
    // Looked up (and kept) without sending a scan: an empty body is refused after the token is found.
    const unsent = () => t.request(TELEMETRY, { method: 'POST', headers: { 'content-type': 'application/json', 'x-probe-token': apiToken }, body: '{}' });
    expect((await unsent()).status).toBe(400);
    clock.advance((t.config.retention.unusedLeadDays + 1) * DAY_MS);
    expect(await createRecordRetention(t.storage.retention, clock, t.config.retention).runOnce()).toBe(1);
    const refused = await unsent();
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: string }).error).toBe('invalid_token');
  });
});

describe('the verified cache', () => {
  const sqlite = (file = ':memory:') => {
    const db = new Database(file);
    db.run('PRAGMA journal_mode = WAL');
    db.run('CREATE TABLE IF NOT EXISTS t (x)');
    db.run('CREATE TABLE IF NOT EXISTS other (x)');
    return db;
  };
  /** The SQLite change feed's stamp of table t (src/storage/sqlite/changes.ts). */
  const stampOf = (db: Database) => createTableWriteStamp(db, 't_writes', ['t']);

  test('a verified secret is read again only after its table changes, not after other commits; a kept one is answered without a promise', async () => {
    const db = sqlite();
    const cache = createVerifiedCache<string>(stampOf(db), 10);
    let reads = 0;
    const verify = async () => (reads++, 'value');
    expect(await cache.get('hash-a', verify)).toBe('value');
    expect(cache.get('hash-a', verify)).toBe('value');
    expect(reads).toBe(1);
    // Telemetry batches commit all the time: a commit to another table keeps the secret.
    db.run('INSERT INTO other VALUES (1)');
    expect(cache.get('hash-a', verify)).toBe('value');
    expect(reads).toBe(1);
    for (const write of ['INSERT INTO t VALUES (1)', 'UPDATE t SET x = 2', 'DELETE FROM t']) {
      db.run(write);
      expect(await cache.get('hash-a', verify)).toBe('value');
      expect(cache.get('hash-a', verify)).toBe('value');
    }
    expect(reads).toBe(4);
    db.close();
  });

  test("a commit by another connection to the same file is seen on the next lookup", async () => {
    const dir = tempDir('svc-verified-cache-');
    const file = path.join(dir.dir, 'cache.db');
    const db = sqlite(file);
    const cache = createVerifiedCache<string>(stampOf(db), 10);
    let reads = 0;
    const verify = async () => (reads++, 'value');
    await cache.get('hash-a', verify);
    await cache.get('hash-a', verify);
    expect(reads).toBe(1);
    const other = new Database(file);
    other.run('INSERT INTO t VALUES (1)');
    other.close();
    await cache.get('hash-a', verify);
    expect(reads).toBe(2);
    db.close();
    dir.remove();
  });

  test('a lookup answered after its table changed is not kept: a revocation committed while storage answered is seen on the next lookup', async () => {
    let stamp = 1;
    const cache = createVerifiedCache<string>(() => String(stamp), 10);
    let answer!: (value: string) => void;
    const pending = cache.get('hash-a', () => new Promise<string>((resolve) => (answer = resolve)));
    stamp++;
    answer('read before the revocation');
    expect(await pending).toBe('read before the revocation');
    expect(await cache.get('hash-a', async () => 'revoked')).toBe('revoked');
  });

  test('what a lookup read inside a transaction is not kept once the transaction rolled back, even when the table\'s counter comes back to what it read', async () => {
    const db = sqlite();
    const cache = createVerifiedCache<string>(stampOf(db), 10);
    let value = 'committed';
    const verify = async () => value;
    expect(await cache.get('hash-a', verify)).toBe('committed');
    const inside: ReturnType<typeof cache.get>[] = [];
    const rolledBack = db.transaction(() => {
      db.run('INSERT INTO t VALUES (1)');
      value = 'uncommitted';
      inside.push(cache.get('hash-a', verify));
      throw new Error('rolled back');
    });
    expect(rolledBack).toThrow('rolled back');
    expect(await inside[0]).toBe('uncommitted');
    // The next committed write moves the counter to the value the transaction saw.
    db.run('INSERT INTO t VALUES (2)');
    value = 'changed';
    expect(await cache.get('hash-a', verify)).toBe('changed');
    db.close();
  });

  test('a refused secret is never kept: each attempt is checked again', async () => {
    const db = sqlite();
    const cache = createVerifiedCache<string>(stampOf(db), 10);
    let reads = 0;
    const refuse = async () => (reads++, null);
    expect(await cache.get('hash-x', refuse)).toBeNull();
    expect(await cache.get('hash-x', refuse)).toBeNull();
    expect(reads).toBe(2);
    db.close();
  });

  test('the cache holds at most its limit, dropping the oldest first', async () => {
    const db = sqlite();
    const cache = createVerifiedCache<string>(stampOf(db), 2);
    const reads: string[] = [];
    const verify = (hash: string) => async () => (reads.push(hash), hash);
    for (const hash of ['a', 'b', 'c']) await cache.get(hash, verify(hash));
    await cache.get('c', verify('c'));
    await cache.get('b', verify('b'));
    await cache.get('a', verify('a'));
    expect(reads).toEqual(['a', 'b', 'c', 'a']);
    db.close();
  });
});
