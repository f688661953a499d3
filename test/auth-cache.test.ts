import { Database } from 'bun:sqlite';
import { afterEach, describe, expect, test } from 'bun:test';
import path from 'node:path';
import { createVerifiedCache } from '../src/auth/verified-cache.ts';
import { createRecordRetention } from '../src/db/retention.ts';
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
afterEach(() => t?.close());

const dashboard = (key: string) => t.request('/api/v1/dashboard/scans', { headers: bearer(key) });
const probe = (token: string) => t.request(TELEMETRY, tokenInit(token, scanPayload()));

describe('verified keys kept in memory', () => {
  test('a key revoked through the admin API is refused on the next request', async () => {
    t = await makeTestApp();
    const { key, record } = t.keys.create({ name: 'dash', scopes: ['dashboard:read'] });
    expect((await dashboard(key)).status).toBe(200);
    expect((await dashboard(key)).status).toBe(200);
    expect((await t.request(`/api/v1/admin/keys/${record.id}`, { method: 'DELETE', headers: bearer(t.keyWith('admin')) })).status).toBe(200);
    expect((await dashboard(key)).status).toBe(401);
  });

  test('a key revoked by another database connection is refused on the next request', async () => {
    t = await makeTestApp();
    const { key, record } = t.keys.create({ name: 'dash', scopes: ['dashboard:read'] });
    expect((await dashboard(key)).status).toBe(200);
    const other = new Database(t.config.databaseFile);
    other.run('UPDATE api_keys SET revoked_at = ? WHERE id = ?', [Date.now(), record.id]);
    other.close();
    expect((await dashboard(key)).status).toBe(401);
  });

  test("a key whose scopes another connection narrowed is refused the scope on the next request", async () => {
    t = await makeTestApp();
    const { key, record } = t.keys.create({ name: 'dash', scopes: ['dashboard:read'] });
    expect((await dashboard(key)).status).toBe(200);
    const other = new Database(t.config.databaseFile);
    other.run(`UPDATE api_keys SET scopes = '["metrics:read"]' WHERE id = ?`, [record.id]);
    other.close();
    expect((await dashboard(key)).status).toBe(403);
  });
});

describe('leads found by token kept in memory', () => {
  test('a lead token revoked or rotated is refused on the next probe request', async () => {
    t = await makeTestApp();
    const revoked = t.leads.create('revoked@example.com', true);
    expect((await probe(revoked.apiToken)).status).toBe(204);
    t.leads.revoke(revoked.lead.id);
    expect((await probe(revoked.apiToken)).status).toBe(401);

    const rotated = t.leads.create('rotated@example.com', true);
    expect((await probe(rotated.apiToken)).status).toBe(204);
    const fresh = t.leads.rotate(rotated.lead.id)!;
    expect((await probe(rotated.apiToken)).status).toBe(401);
    expect((await probe(fresh)).status).toBe(204);
  });

  test('a lead verified after its token was first used counts as verified on the next request', async () => {
    t = await makeTestApp();
    const { lead, apiToken } = t.leads.create('later@example.com');
    const tierOf = async () => (await probe(apiToken)).headers.get('ratelimit-policy');
    expect(await tierOf()).toStartWith('"anonymous"');
    t.leads.verify(lead.id);
    expect(await tierOf()).toStartWith('"authed"');
  });

  test('an unused sign-up that expired (record retention deleted it) is refused on the next request', async () => {
    const clock = fixedClock(NOW);
    t = await makeTestApp({ clock });
    const { apiToken } = t.leads.create('expired@example.com');
    // Looked up (and kept) without sending a scan: an empty body is refused after the token is found.
    const unsent = () => t.request(TELEMETRY, { method: 'POST', headers: { 'content-type': 'application/json', 'x-probe-token': apiToken }, body: '{}' });
    expect((await unsent()).status).toBe(400);
    clock.advance((t.config.retention.unusedLeadDays + 1) * DAY_MS);
    expect(await createRecordRetention(t.database.sqlite, clock, t.config.retention).runOnce()).toBe(1);
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

  test('a verified secret is read again only after its table changes, not after other commits', () => {
    const db = sqlite();
    const cache = createVerifiedCache<string>(db, 't', 10);
    let reads = 0;
    const verify = () => (reads++, 'value');
    expect(cache.get('hash-a', verify)).toBe('value');
    expect(cache.get('hash-a', verify)).toBe('value');
    expect(reads).toBe(1);
    // Telemetry batches commit all the time: a commit to another table keeps the secret.
    db.run('INSERT INTO other VALUES (1)');
    expect(cache.get('hash-a', verify)).toBe('value');
    expect(reads).toBe(1);
    for (const write of ['INSERT INTO t VALUES (1)', 'UPDATE t SET x = 2', 'DELETE FROM t']) {
      db.run(write);
      expect(cache.get('hash-a', verify)).toBe('value');
      expect(cache.get('hash-a', verify)).toBe('value');
    }
    expect(reads).toBe(4);
    db.close();
  });

  test("a commit by another connection to the same file is seen on the next lookup", () => {
    const dir = tempDir('svc-verified-cache-');
    const file = path.join(dir.dir, 'cache.db');
    const db = sqlite(file);
    const cache = createVerifiedCache<string>(db, 't', 10);
    let reads = 0;
    const verify = () => (reads++, 'value');
    cache.get('hash-a', verify);
    cache.get('hash-a', verify);
    expect(reads).toBe(1);
    const other = new Database(file);
    other.run('INSERT INTO t VALUES (1)');
    other.close();
    cache.get('hash-a', verify);
    expect(reads).toBe(2);
    db.close();
    dir.remove();
  });

  test('inside a transaction the cache is bypassed, and a rolled-back write leaves no stale entry behind', () => {
    const db = sqlite();
    const cache = createVerifiedCache<string>(db, 't', 10);
    let value = 'committed';
    let reads = 0;
    const verify = () => (reads++, value);
    expect(cache.get('hash-a', verify)).toBe('committed');
    db.run('BEGIN');
    db.run('INSERT INTO t VALUES (1)');
    value = 'uncommitted';
    expect(cache.get('hash-a', verify)).toBe('uncommitted');
    db.run('ROLLBACK');
    value = 'committed';
    expect(cache.get('hash-a', verify)).toBe('committed');
    // A committed write after the rollback still empties the cache.
    db.run('INSERT INTO t VALUES (2)');
    value = 'changed';
    expect(cache.get('hash-a', verify)).toBe('changed');
    db.close();
  });

  test('a refused secret is never kept: each attempt is checked again', () => {
    const db = sqlite();
    const cache = createVerifiedCache<string>(db, 't', 10);
    let reads = 0;
    const refuse = () => (reads++, null);
    expect(cache.get('hash-x', refuse)).toBeNull();
    expect(cache.get('hash-x', refuse)).toBeNull();
    expect(reads).toBe(2);
    db.close();
  });

  test('the cache holds at most its limit, dropping the oldest first', () => {
    const db = sqlite();
    const cache = createVerifiedCache<string>(db, 't', 2);
    const reads: string[] = [];
    const verify = (hash: string) => () => (reads.push(hash), hash);
    for (const hash of ['a', 'b', 'c']) cache.get(hash, verify(hash));
    cache.get('c', verify('c'));
    cache.get('b', verify('b'));
    cache.get('a', verify('a'));
    expect(reads).toEqual(['a', 'b', 'c', 'a']);
    db.close();
  });
});
