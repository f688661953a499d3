import { describe, expect, test } from 'bun:test';
import { Database } from 'bun:sqlite';
import { cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { migrate } from 'drizzle-orm/bun-sqlite/migrator';
import path from 'node:path';
import { MIGRATIONS_FOLDER, openDatabase } from '../../src/db/index.ts';
import { runCli } from '../helpers/cli.ts';
import { serversPerTest } from '../helpers/server.ts';
import { TELEMETRY, scanPayload, tokenInit } from '../helpers/probe.ts';

const servers = serversPerTest('svc-restore-');
const SPAWNS_TIMEOUT = 30_000;
const cli = (...args: string[]) => runCli([...args, '--data-dir', servers.dataDir], { timeoutMs: 15_000 });
const emails = async () => ((await cli('leads', 'list')).json.items as { email: string }[]).map((lead) => lead.email).sort();

describe('svc backup and svc restore', () => {
  test('round trip: backup while serving, write more, restore with the server stopped: the later writes are gone', async () => {
    const server = await servers.start();
    const signUp = (email: string) =>
      fetch(`${server.url}/api/v1/public/leads`, { method: 'POST', body: JSON.stringify({ email }), headers: { 'content-type': 'application/json' } });
    const before = await signUp('before@example.com');
    expect(before.status).toBe(201);
    const { apiToken: beforeToken } = await before.json();

    // backup creates missing parent directories.
    const file = path.join(servers.dir, 'backups', 'nightly', 'svc.db');
    const backup = await cli('backup', file);
    expect(backup.code).toBe(0);
    expect(backup.json).toEqual({ file, bytes: expect.any(Number) });
    const after = await signUp('after@example.com');
    expect(after.status).toBe(201);
    const { apiToken: afterToken } = await after.json();

    // Refused while the server holds the data directory; nothing changes.
    const refused = await cli('restore', file);
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim()).toStartWith(`svc: the data directory ${servers.dataDir} is in use by another svc (pid ${server.proc.pid}`);
    expect(await emails()).toEqual(['after@example.com', 'before@example.com']);

    expect(await server.stop('SIGTERM')).toBe(0);
    const restored = await cli('restore', file);
    expect(restored.code).toBe(0);
    const dbFile = path.join(servers.dataDir, 'svc.db');
    expect(restored.json).toEqual({ restored: file, database: dbFile, previous: expect.stringMatching(/svc\.db\.before-restore-/), migrationsApplied: 0 });
    expect(await emails()).toEqual(['before@example.com']);
    // The database it replaced is kept aside, whole.
    const previous = new Database(restored.json.previous, { readonly: true });
    expect(previous.query('SELECT count(*) AS n FROM leads').get()).toEqual({ n: 2 });
    previous.close();

    const again = await servers.start();
    expect((await fetch(`${again.url}/healthz`)).status).toBe(200);
    // The restarted server serves the restored database: the lead from before the backup is known, the later one is not.
    expect((await fetch(`${again.url}${TELEMETRY}`, tokenInit(beforeToken, scanPayload()))).status).toBe(204);
    expect((await fetch(`${again.url}${TELEMETRY}`, tokenInit(afterToken, scanPayload()))).status).toBe(401);
  }, SPAWNS_TIMEOUT);

  test('a backup from an older schema is restored and migrated to this one', async () => {
    // A database as the previous release left it: every migration but the newest.
    const migrations = path.join(servers.dir, 'previous-release');
    cpSync(MIGRATIONS_FOLDER, migrations, { recursive: true });
    const journalFile = path.join(migrations, 'meta', '_journal.json');
    const journal = JSON.parse(readFileSync(journalFile, 'utf8'));
    journal.entries.pop();
    writeFileSync(journalFile, JSON.stringify(journal));
    const file = path.join(servers.dir, 'old.db');
    const old = openDatabase(file);
    migrate(old.db, { migrationsFolder: migrations });
    old.sqlite.run("INSERT INTO leads (id, email, verified, created_at) VALUES ('old-lead', 'old@example.com', 0, 1)");
    old.close();
    const restored = await cli('restore', file);
    expect(restored.code).toBe(0);
    expect(restored.json.migrationsApplied).toBe(1);
    expect(await emails()).toEqual(['old@example.com']);
  }, SPAWNS_TIMEOUT);

  test('files that are not an intact svc database are refused and the database is left alone', async () => {
    expect((await cli('leads', 'create', '--email', 'kept@example.com')).code).toBe(0);
    const junk = path.join(servers.dir, 'junk.db');
    writeFileSync(junk, 'not a database at all\n'.repeat(500));
    const other = path.join(servers.dir, 'other.db');
    const foreign = new Database(other, { create: true });
    foreign.run('CREATE TABLE notes (text TEXT)');
    foreign.close();
    const damaged = path.join(servers.dir, 'damaged.db');
    expect((await cli('backup', damaged)).code).toBe(0);
    const bytes = readFileSync(damaged);
    bytes.fill(0x5a, 4096 * 2, 4096 * 3); // one page overwritten
    writeFileSync(damaged, bytes);
    const newer = path.join(servers.dir, 'newer.db');
    expect((await cli('backup', newer)).code).toBe(0);
    const future = new Database(newer);
    future.run("INSERT INTO __drizzle_migrations (hash, created_at) VALUES ('future', 9999999999999)");
    future.close();

    const cases: [string, string][] = [
      [path.join(servers.dir, 'missing.db'), 'no file at'],
      [junk, 'is damaged or not an SQLite database: file is not a database'],
      [other, 'is not an svc database (no __drizzle_migrations, api_keys, leads, scans table)'],
      [damaged, 'is damaged'],
      [newer, 'newer than this svc'],
    ];
    for (const [file, problem] of cases) {
      const res = await cli('restore', file);
      expect(res.code).toBe(1);
      expect(res.stderr).toContain(problem);
    }
    expect(await emails()).toEqual(['kept@example.com']);
    expect(existsSync(path.join(servers.dataDir, 'svc.db.restoring'))).toBe(false);
  }, SPAWNS_TIMEOUT);
});
