// The engine choice from the command line (issue 30 item 1), on a real PostgreSQL (npm run test:postgres).
import { afterEach, beforeEach, expect, test } from 'bun:test';
import { SQL } from 'bun';
import { runCli } from '../helpers/cli.ts';
import { createTestDatabase, describePostgres, type TestDatabase } from '../helpers/postgres.ts';

describePostgres('svc on PostgreSQL, from the command line', () => {
  let database: TestDatabase;
  beforeEach(async () => {
    database = await createTestDatabase();
  });
  afterEach(() => database.drop());

  const password = () => decodeURIComponent(new URL(database.url).password);
  const shown = () => Object.assign(new URL(database.url), { username: '', password: '' }).href;

  test('svc migrate --database-url migrates an empty database once, naming it without its credentials', async () => {
    const first = await runCli(['migrate', '--database-url', database.url]);
    expect(first.code).toBe(0);
    expect(first.json).toEqual({ database: shown(), applied: expect.any(Number), total: expect.any(Number) });
    expect(first.json.applied).toBe(first.json.total);
    const again = await runCli(['migrate'], { env: { SVC_DATABASE_URL: database.url } });
    expect(again.json).toEqual({ database: shown(), applied: 0, total: first.json.total });
    expect(first.stdout + first.stderr + again.stdout + again.stderr).not.toContain(password());
  });

  test('a refused login stops with one line (exit 1) naming the URL without the password; neither password is shown', async () => {
    const url = Object.assign(new URL(database.url), { password: 'Wrong-Secret-9' }).href;
    const refused = await runCli(['migrate', '--database-url', url]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^svc: cannot use PostgreSQL at postgres:\/\/127\.0\.0\.1:\d+\/\w+: the login was refused: password authentication failed/)]);
    expect(refused.stderr).not.toContain('Wrong-Secret-9');
    expect(refused.stderr).not.toContain(password());
  });

  test('a database that does not exist stops with one line saying so', async () => {
    const url = Object.assign(new URL(database.url), { pathname: '/no_such_svc_db' }).href;
    const refused = await runCli(['migrate', '--database-url', url]);
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim().split('\n')).toEqual([expect.stringContaining('database "no_such_svc_db" does not exist')]);
  });

  test('a database migrated by a newer svc is refused with one line, and left as it was', async () => {
    expect((await runCli(['migrate', '--database-url', database.url])).code).toBe(0);
    const sql = new SQL(database.url);
    try {
      await sql`INSERT INTO drizzle.__drizzle_migrations (hash, created_at) VALUES ('future', ${Date.now()})`;
      const before = Number((await sql`SELECT count(*) AS n FROM drizzle.__drizzle_migrations`)[0].n);
      const refused = await runCli(['migrate', '--database-url', database.url]);
      expect(refused.code).toBe(1);
      expect(refused.stderr.trim().split('\n')).toEqual([`svc: the PostgreSQL database has schema version ${before}, newer than this svc's ${before - 1}: it was migrated by a newer svc; run that version`]);
      expect(Number((await sql`SELECT count(*) AS n FROM drizzle.__drizzle_migrations`)[0].n)).toBe(before);
    } finally {
      await sql.close();
    }
  });

  test('keys, leads and stores commands work on PostgreSQL as on SQLite: what one command writes, the next reads', async () => {
    const env = { SVC_DATABASE_URL: database.url };
    const created = await runCli(['keys', 'create', '--scopes', 'admin', '--name', 'ops'], { env });
    expect(created.code).toBe(0);
    const { id, key, scopes } = created.json;
    expect([typeof id, key, scopes]).toEqual(['string', expect.stringMatching(/^sk_live_/), ['admin']]);
    const listed = await runCli(['keys', 'list'], { env });
    expect(listed.json.items.map((item: { id: string }) => item.id)).toEqual([id]);
    const revoked = await runCli(['keys', 'revoke', id], { env });
    expect([revoked.code, revoked.stderr]).toEqual([0, '']);
    expect(revoked.json).toEqual({ id, revokedAt: expect.any(String) });
    // A key bound to a store that does not exist is refused, as on SQLite.
    expect((await runCli(['keys', 'create', '--scopes', 'products:read', '--store', 'st_missing'], { env })).code).toBe(1);

    const lead = await runCli(['leads', 'create', '--email', 'owner@example.com', '--verified'], { env });
    expect(lead.json).toMatchObject({ id: expect.any(String), apiToken: expect.any(String), verified: true });
    expect((await runCli(['leads', 'list', '--email', 'owner'], { env })).json.items.map((item: { email: string }) => item.email)).toEqual(['owner@example.com']);
    expect((await runCli(['stores', 'list'], { env })).json).toEqual({ items: [] });
    expect((await runCli(['stores', 'settings', 'get', 'st_missing'], { env })).code).toBe(1);
  });
});
