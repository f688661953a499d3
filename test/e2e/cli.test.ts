import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Database } from 'bun:sqlite';
import { sha256Hex } from '../../src/lib/crypto.ts';
import { runCli } from '../helpers/cli.ts';
import { queryDataDir, testSqliteOnly } from '../helpers/engine.ts';
import { bearer, jsonRequest, makeTestApp, tempDir } from '../helpers/app.ts';
import { fixedClock } from '../../src/lib/clock.ts';

let tmp: ReturnType<typeof tempDir>;
let dataDir: string;
const cli = (...args: string[]) => runCli([...args, '--data-dir', dataDir]);

beforeEach(() => {
  tmp = tempDir('svc-cli-');
  dataDir = path.join(tmp.dir, 'data');
});
afterEach(() => tmp.remove());

describe('svc CLI', () => {
  testSqliteOnly('it names the SQLite file and the rollups file beside it; migrating PostgreSQL is test/postgres/migrate.test.ts', 'migrate creates the database and is idempotent', async () => {
    const first = await cli('migrate');
    expect(first.code).toBe(0);
    expect(first.json.database).toBe(path.join(dataDir, 'svc.db'));
    expect(first.json.applied).toBeGreaterThan(0);
    expect(first.json.total).toBe(first.json.applied);
    const second = await cli('migrate');
    expect(second.json).toMatchObject({ applied: 0, total: first.json.total });
    // The dashboard's rollups file is the server's (its stats reader makes it): a command leaves none.
    expect(existsSync(path.join(dataDir, 'svc-rollups.db'))).toBe(false);
  });

  test('keys create prints the key once and stores only its hash', async () => {
    // A store made through the admin API, as an operator would before binding a widget key to it.
    const app = await makeTestApp({ dataDir });
    const store = await app.request(
      '/api/v1/admin/stores',
      jsonRequest('POST', { platform: 'platform-a', domain: 'shop.myplatform-a.com', currency: 'EUR', credentials: { accessToken: 'token' } }, bearer(await app.keyWith('admin'))),
    );
    const storeId: string = (await store.json()).id;
    await app.close();
    const res = await cli('keys', 'create', '--scopes', 'products:read,probe:scan', '--domains', 'shop.example.com,*.example.org', '--store', storeId, '--name', 'widget');
    expect(res.code).toBe(0);
    expect(res.json).toEqual({
      id: expect.any(String),
      key: expect.stringMatching(/^sk_live_[A-Za-z0-9_-]{43}$/),
      scopes: ['products:read', 'probe:scan'],
      allowedDomains: ['shop.example.com', '*.example.org'],
      storeId,
    });
    expect(await queryDataDir(dataDir, "SELECT key_hash, name FROM api_keys WHERE name = 'widget'")).toEqual([{ key_hash: sha256Hex(res.json.key), name: 'widget' }]);
  });

  test('keys create rejects unknown scopes and unknown stores on stderr with a non-zero exit', async () => {
    const res = await cli('keys', 'create', '--scopes', 'root');
    expect(res.code).not.toBe(0);
    expect(res.stdout).toBe('');
    expect(res.stderr).toContain('unknown: root');
    const store = await cli('keys', 'create', '--scopes', 'products:read', '--store', 'no-such-store');
    expect(store.code).toBe(1);
    expect(store.stderr).toContain('unknown_store');
  });

  test('keys revoke revokes; an unknown id fails', async () => {
    const { json } = await cli('keys', 'create', '--scopes', 'admin');
    const res = await cli('keys', 'revoke', json.id);
    expect(res.code).toBe(0);
    expect(res.json).toMatchObject({ id: json.id, revokedAt: expect.any(String) });
    const missing = await cli('keys', 'revoke', 'no-such-id');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('not_found');
  });

  test('keys list prints every key, oldest first, with its prefix, scopes, store, domains, creation, last use and revocation', async () => {
    const empty = await cli('keys', 'list');
    expect(empty).toMatchObject({ code: 0, json: { items: [] } });
    const app = await makeTestApp({ dataDir, clock: fixedClock(Date.parse('2026-11-20T09:00:00.000Z')) });
    const admin = await app.keyWith('admin');
    const store = await app.request('/api/v1/admin/stores', jsonRequest('POST', { platform: 'platform-a', domain: 'shop.myplatform-a.com', currency: 'EUR', credentials: { accessToken: 'token' } }, bearer(admin)));
    const storeId: string = (await store.json()).id;
    app.close();
    const widget = await cli('keys', 'create', '--scopes', 'products:read', '--domains', 'shop.example.com', '--store', storeId, '--name', 'widget');
    const ci = await cli('keys', 'create', '--scopes', 'probe:scan', '--name', 'ci');
    await cli('keys', 'revoke', ci.json.id);

    const res = await cli('keys', 'list');
    expect(res.code).toBe(0);
    expect(res.json.items).toEqual([
      {
        id: expect.any(String),
        name: 'test',
        keyPrefix: admin.slice(0, 12),
        scopes: ['admin'],
        allowedDomains: [],
        storeId: null,
        createdAt: '2026-11-20T09:00:00.000Z',
        lastUsedAt: '2026-11-20T09:00:00.000Z',
        revokedAt: null,
      },
      {
        id: widget.json.id,
        name: 'widget',
        keyPrefix: widget.json.key.slice(0, 12),
        scopes: ['products:read'],
        allowedDomains: ['shop.example.com'],
        storeId,
        createdAt: expect.any(String),
        lastUsedAt: null,
        revokedAt: null,
      },
      expect.objectContaining({ id: ci.json.id, name: 'ci', lastUsedAt: null, revokedAt: expect.any(String) }),
    ]);
    expect(res.stdout).not.toContain(widget.json.key);
    expect((await cli('keys', 'list', 'extra')).code).toBe(2);
  });

  test('leads create, verify, rotate, revoke', async () => {
    const created = await cli('leads', 'create', '--email', 'lead@example.com');
    expect(created.code).toBe(0);
    expect(created.json).toEqual({ id: expect.any(String), apiToken: expect.any(String), verified: false });
    const preVerified = await cli('leads', 'create', '--email', 'other@example.com', '--verified');
    expect(preVerified.json.verified).toBe(true);

    const id = created.json.id;
    expect((await cli('leads', 'verify', id)).json).toEqual({ id, verified: true });
    const rotated = await cli('leads', 'rotate', id);
    expect(rotated.json).toEqual({ id, apiToken: expect.any(String) });
    expect(rotated.json.apiToken).not.toBe(created.json.apiToken);
    expect((await cli('leads', 'revoke', id)).json).toEqual({ id, tokenActive: false });

    const duplicate = await cli('leads', 'create', '--email', 'LEAD@example.com');
    expect(duplicate.code).toBe(1);
    expect(duplicate.stderr).toContain('lead_exists');
    expect((await cli('leads', 'rotate', 'missing')).code).toBe(1);
  });

  test('leads list prints every lead, newest first, or those whose email contains --email', async () => {
    const first = (await cli('leads', 'create', '--email', 'first@shop.example')).json;
    const second = (await cli('leads', 'create', '--email', 'second@other.example', '--verified')).json;
    const all = await cli('leads', 'list');
    expect(all.code).toBe(0);
    expect(all.json).toEqual({
      items: [
        { id: second.id, email: 'second@other.example', verified: true, tokenActive: true, createdAt: expect.any(String), verifiedAt: expect.any(String), repeatOf: null },
        { id: first.id, email: 'first@shop.example', verified: false, tokenActive: true, createdAt: expect.any(String), verifiedAt: null, repeatOf: null },
      ],
    });
    expect((await cli('leads', 'list', '--email', 'SHOP.example')).json.items.map((lead: { id: string }) => lead.id)).toEqual([first.id]);
    expect((await cli('leads', 'list', '--email', 'nobody')).json).toEqual({ items: [] });
  });

  test('leads create and list refuse an email with control or invisible formatting characters, as the API does', async () => {
    // The HTTP surfaces run the whole table (test/lead-email.test.ts); a process argument cannot hold NUL.
    for (const [hidden, name] of [['\u001b', 'U+001B'], ['\u202e', 'U+202E'], ['\u2066', 'U+2066']] as const) {
      const created = await cli('leads', 'create', '--email', `evil${hidden}@example.com`);
      expect(created.code).toBe(1);
      expect(created.stderr).toContain('invalid_email');
      expect(created.stderr).toContain(name);
      const listed = await cli('leads', 'list', '--email', `evil${hidden}`);
      expect(listed.code).toBe(1);
      expect(listed.stderr).toContain('invalid_query');
    }
    expect((await cli('leads', 'list')).json).toEqual({ items: [] });
  });

  test('keys create refuses a products:read key without --store (the widget needs one)', async () => {
    const res = await cli('keys', 'create', '--scopes', 'products:read', '--domains', 'shop.example.com');
    expect(res.code).toBe(1);
    expect(res.stderr.trim()).toBe('svc: store_required: a products:read key is for the FAQ widget, which serves one store: give its storeId (svc keys create --store STORE_ID); admin keys need none');
    expect((await cli('keys', 'create', '--scopes', 'admin')).code).toBe(0);
  });

  testSqliteOnly('it copies the SQLite file; on PostgreSQL svc backup points to pg_dump', 'backup writes a consistent copy and refuses to overwrite', async () => {
    const { json: key } = await cli('keys', 'create', '--scopes', 'admin');
    const file = path.join(tmp.dir, 'backup.db');
    const res = await cli('backup', file);
    expect(res.code).toBe(0);
    expect(res.json).toMatchObject({ file, bytes: expect.any(Number) });
    const copy = new Database(file, { readonly: true });
    expect((copy.query('SELECT id FROM api_keys').get() as { id: string }).id).toBe(key.id);
    copy.close();
    const again = await cli('backup', file);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('already exists');
  });

  testSqliteOnly('it checks the SQLite file (integrity, schema objects, a file that is no database)', 'doctor prints what it checked in the database and what it found, and exits 1 when something is wrong', async () => {
    const first = await cli('migrate');
    const file = path.join(dataDir, 'svc.db');
    const healthy = await cli('doctor');
    expect(healthy.code).toBe(0);
    expect(healthy.stderr).toBe('');
    expect(healthy.json).toEqual({
      database: file,
      ok: true,
      integrity: { ok: true, problems: [] },
      schemaVersion: { ok: true, database: first.json.total, binary: first.json.total },
      schema: { ok: true, objects: expect.any(Number), differences: [] },
    });
    expect(healthy.json.schema.objects).toBeGreaterThan(20);

    // A file that is not a database: the later checks cannot run.
    const junk = path.join(tmp.dir, 'junk.db');
    await Bun.write(junk, 'not a database at all\n'.repeat(500));
    const damaged = await cli('doctor', junk);
    expect(damaged.code).toBe(1);
    expect(damaged.json).toEqual({
      database: junk,
      ok: false,
      integrity: { ok: false, problems: ['not an SQLite database: file is not a database'] },
      schemaVersion: { ok: false, skipped: 'the file is damaged' },
      schema: { ok: false, skipped: 'the file is damaged' },
    });

    // Migrated by a newer svc: its schema is unknown here.
    const db = new Database(file);
    db.run("INSERT INTO __drizzle_migrations (hash, created_at) VALUES ('future', 9999999999999)");
    db.close();
    const newer = await cli('doctor');
    expect(newer.code).toBe(1);
    expect(newer.json).toMatchObject({
      ok: false,
      integrity: { ok: true },
      schemaVersion: { ok: false, database: first.json.total + 1, binary: first.json.total },
      schema: { ok: false, skipped: "the database is newer than this svc, which does not know that version's schema" },
    });

    const missing = await cli('doctor', path.join(tmp.dir, 'missing.db'));
    expect(missing.code).toBe(1);
    expect(missing.stderr.trim()).toBe(`svc: no database at ${path.join(tmp.dir, 'missing.db')}`);
    expect((await cli('doctor', 'a.db', 'b.db')).code).toBe(2);
  });

  test('invalid configuration stops with one line naming the setting', async () => {
    const res = await runCli(['migrate', '--data-dir', dataDir], { env: { SVC_MAX_BODY_BYTES: 'lots' } });
    expect(res.code).toBe(2);
    expect(res.stderr.trim().split('\n')).toHaveLength(1);
    expect(res.stderr).toContain('SVC_MAX_BODY_BYTES');
    expect(existsSync(dataDir)).toBe(false);
  });

  testSqliteOnly('on PostgreSQL the commands keep nothing in the data directory, so they need none', 'a data directory that cannot be created (a file in the way) stops serve and the CLI with one line naming it', async () => {
    const file = path.join(tmp.dir, 'not-a-directory');
    await Bun.write(file, 'x');
    for (const args of [['keys', 'create', '--scopes', 'admin'], ['serve', '--http', '127.0.0.1:0']]) {
      const res = await runCli([...args, '--data-dir', file], { timeoutMs: 30_000 });
      expect(res.code, args[0]).toBe(1);
      expect(res.stderr.trim().split('\n'), args[0]).toEqual([`svc: cannot create the data directory ${file}: a file is in the way`]);
    }
  });

  test('unknown commands and flags are usage errors', async () => {
    expect((await cli('frobnicate')).code).toBe(2);
    expect((await cli('keys', 'create', '--scopes', 'admin', '--bogus', 'x')).code).toBe(2);
    expect((await cli('keys', 'create')).stderr).toContain('--scopes');
  });
});
