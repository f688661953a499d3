import { describe, expect, test } from 'bun:test';
import { Database } from 'bun:sqlite';
import { cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { migrate } from 'drizzle-orm/bun-sqlite/migrator';
import path from 'node:path';
import { MIGRATIONS_FOLDER, openDatabase } from '../../src/storage/sqlite/db/index.ts';
import { sha256Hex } from '../../src/lib/crypto.ts';
import { runCli } from '../helpers/cli.ts';
import { engineEnv, POSTGRES_MODE, testSqliteOnly } from '../helpers/engine.ts';
import { serversPerTest } from '../helpers/server.ts';
import { TELEMETRY, scanPayload, tokenInit } from '../helpers/probe.ts';

const servers = serversPerTest('svc-restore-');
const SPAWNS_TIMEOUT = 30_000;
const cli = (...args: string[]) => runCli([...args, '--data-dir', servers.dataDir], { timeoutMs: 15_000 });
const emails = async () => ((await cli('leads', 'list')).json.items as { email: string }[]).map((lead) => lead.email).sort();
/** Why the backup and restore tests are SQLite's: on PostgreSQL svc copies and replaces no file (the last test here). */
const FILE_COPIES = 'svc backup and svc restore copy and replace the SQLite file; on PostgreSQL they point to pg_dump and pg_restore';

describe('svc backup and svc restore', () => {
  testSqliteOnly(FILE_COPIES, 'round trip: backup while serving, write more, restore with the server stopped: the later writes are gone', async () => {
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
    // A scan after the backup, rolled up by the server's roller into the rollups file.
    expect((await fetch(`${server.url}${TELEMETRY}`, tokenInit(afterToken, scanPayload()))).status).toBe(204);
    const rollupsFile = path.join(servers.dataDir, 'svc-rollups.db');
    const watermark = () => {
      const rollups = new Database(rollupsFile, { readonly: true });
      try {
        return (rollups.query('SELECT watermark FROM scan_rollup_state').get() as { watermark: number }).watermark;
      } finally {
        rollups.close();
      }
    };
    while (watermark() === 0) await Bun.sleep(50);

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
    // The rollups of the scans that were there are gone: the restored scans are folded afresh.
    expect(existsSync(rollupsFile)).toBe(false);
    // The database it replaced is kept aside, whole.
    const previous = new Database(restored.json.previous, { readonly: true });
    expect(previous.query('SELECT count(*) AS n FROM leads').get()).toEqual({ n: 2 });
    previous.close();

    const again = await servers.start();
    expect((await fetch(`${again.url}/healthz`)).status).toBe(200);
    // The server starts the rollups afresh: nothing of the scan sent after the backup is in them.
    expect(watermark()).toBe(0);
    // The restarted server serves the restored database: the lead from before the backup is known, the later one is not.
    expect((await fetch(`${again.url}${TELEMETRY}`, tokenInit(beforeToken, scanPayload()))).status).toBe(204);
    expect((await fetch(`${again.url}${TELEMETRY}`, tokenInit(afterToken, scanPayload()))).status).toBe(401);
  }, SPAWNS_TIMEOUT);

  testSqliteOnly(FILE_COPIES, 'a backup from an older schema is restored and migrated to this one', async () => {
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

  testSqliteOnly(FILE_COPIES, 'files that are not an intact svc database are refused and the database is left alone', async () => {
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

/**
 * Issue 27 item 4, as it was tried: a genuine backup with two triggers added. The first gives an admin
 * key of known value to whoever signs up, the second makes every telemetry report fail.
 */
const PLANTED_KEY = `sk_live_${'P'.repeat(43)}`;
const PLANTED = [
  'CREATE TRIGGER welcome_admin AFTER INSERT ON leads BEGIN ' +
    'INSERT OR IGNORE INTO api_keys (id, name, key_hash, key_prefix, scopes, allowed_domains, store_id, created_at) ' +
    `VALUES ('planted', 'planted', '${sha256Hex(PLANTED_KEY)}', 'sk_live_PPPP', '["admin"]', '[]', NULL, 0); END`,
  "CREATE TRIGGER refuse_scans BEFORE INSERT ON scans BEGIN SELECT RAISE(ABORT, 'planted'); END",
];
const PLANTED_PROBLEMS: [string, string] = ["trigger refuse_scans on scans is not created by svc's migrations", "trigger welcome_admin on leads is not created by svc's migrations"];

/** The one line svc refuses `file` with. */
const refusal = (file: string) =>
  `svc: the database ${file} does not have svc's schema: ${PLANTED_PROBLEMS.join('; ')}. ` +
  'Refused before anything in it ran (svc doctor lists every difference): restore a backup svc made, or remove what svc did not create';

function plant(file: string): void {
  const db = new Database(file);
  for (const statement of PLANTED) db.run(statement);
  db.close();
}

/** A genuine svc database with a lead, and a copy of it with the planted triggers. */
async function plantedBackup(): Promise<string> {
  expect((await cli('leads', 'create', '--email', 'kept@example.com')).code).toBe(0);
  const file = path.join(servers.dir, 'planted.db');
  expect((await cli('backup', file)).code).toBe(0);
  plant(file);
  return file;
}

const signUpAndUse = async (url: string) => {
  const signUp = await fetch(`${url}/api/v1/public/leads`, { method: 'POST', body: JSON.stringify({ email: 'new@example.com' }), headers: { 'content-type': 'application/json' } });
  expect(signUp.status).toBe(201);
  const { apiToken } = await signUp.json();
  return {
    admin: (await fetch(`${url}/api/v1/admin/keys`, { headers: { authorization: `Bearer ${PLANTED_KEY}` } })).status,
    telemetry: (await fetch(`${url}${TELEMETRY}`, tokenInit(apiToken, scanPayload()))).status,
  };
};

describe('svc runs nothing in a database that svc did not create (issue 27 item 4)', () => {
  testSqliteOnly(FILE_COPIES, 'restore refuses a backup with triggers svc does not create, naming them, and changes nothing', async () => {
    const file = await plantedBackup();
    const refused = await cli('restore', file);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr.trim().split('\n')).toEqual([refusal(file)]);
    expect(existsSync(path.join(servers.dataDir, 'svc.db.restoring'))).toBe(false);
    expect(await emails()).toEqual(['kept@example.com']);
    // The database in place is the one from before: a sign-up gets no admin key, telemetry is stored.
    const server = await servers.start();
    expect(await signUpAndUse(server.url)).toEqual({ admin: 401, telemetry: 204 });
  }, SPAWNS_TIMEOUT);

  testSqliteOnly('svc checks the schema of the SQLite file it opens (a file restored from anywhere); a PostgreSQL database is restored by pg_restore, outside svc', 'serve refuses to start on a database with triggers svc does not create, with one line naming them and exit 1', async () => {
    expect((await cli('leads', 'create', '--email', 'kept@example.com')).code).toBe(0);
    const file = path.join(servers.dataDir, 'svc.db');
    plant(file);
    const serve = await runCli(['serve', '--http', '127.0.0.1:0', '--data-dir', servers.dataDir], { timeoutMs: 15_000 });
    expect(serve.code).toBe(1);
    expect(serve.stdout).toBe('');
    expect(serve.stderr.trim().split('\n')).toEqual([refusal(file)]);
    // migrate and the commands that write refuse it too, so the trigger on leads never ran.
    for (const args of [['migrate'], ['leads', 'create', '--email', 'other@example.com']]) {
      const res = await cli(...args);
      expect(res.code, args[0]).toBe(1);
      expect(res.stderr, args[0]).toContain(PLANTED_PROBLEMS[1]);
    }
    const db = new Database(file, { readonly: true });
    expect(db.query("SELECT count(*) AS n FROM api_keys WHERE id = 'planted'").get()).toEqual({ n: 0 });
    db.close();
    // Without the triggers it serves again.
    const cleaned = new Database(file);
    cleaned.run('DROP TRIGGER welcome_admin');
    cleaned.run('DROP TRIGGER refuse_scans');
    cleaned.close();
    const server = await servers.start();
    expect(await signUpAndUse(server.url)).toEqual({ admin: 401, telemetry: 204 });
  }, SPAWNS_TIMEOUT);

  testSqliteOnly('svc doctor checks a SQLite file; on PostgreSQL it names the server\'s own tools (test/database-url.test.ts)', 'doctor reports the triggers svc does not create, with what it checked, and exits 1', async () => {
    const file = await plantedBackup();
    const res = await cli('doctor', file);
    expect(res.code).toBe(1);
    expect(res.json).toEqual({
      database: file,
      ok: false,
      integrity: { ok: true, problems: [] },
      schemaVersion: { ok: true, database: expect.any(Number), binary: expect.any(Number) },
      schema: {
        ok: false,
        objects: expect.any(Number),
        differences: [
          { kind: 'unexpected', type: 'trigger', name: 'refuse_scans', table: 'scans', problem: PLANTED_PROBLEMS[0] },
          { kind: 'unexpected', type: 'trigger', name: 'welcome_admin', table: 'leads', problem: PLANTED_PROBLEMS[1] },
        ],
      },
    });
    expect(res.json.schemaVersion.database).toBe(res.json.schemaVersion.binary);
    // The data directory's own database is the default, and is healthy.
    const own = await cli('doctor');
    expect(own.code).toBe(0);
    expect(own.json).toMatchObject({ database: path.join(servers.dataDir, 'svc.db'), ok: true, schema: { ok: true, differences: [] } });
  }, SPAWNS_TIMEOUT);
});

describe('svc backup and svc restore on PostgreSQL (issue 30 item 4)', () => {
  test.skipIf(!POSTGRES_MODE)("beside a running server, backup explains pg_dump and restore refuses with pg_restore's advice: exit 1, no file written, nothing changed, no password shown", async () => {
    expect((await cli('leads', 'create', '--email', 'kept@example.com')).code).toBe(0);
    const server = await servers.start();
    const password = decodeURIComponent(new URL((await engineEnv(servers.dataDir)).SVC_DATABASE_URL!).password);
    const file = path.join(servers.dir, 'backups', 'svc.db');
    for (const [command, advice] of [['backup', 'pg_dump --format=custom'], ['restore', 'pg_restore --no-owner']] as const) {
      const refused = await cli(command, file);
      expect(refused.code, command).toBe(1);
      expect(refused.stdout, command).toBe('');
      expect(refused.stderr.trim().split('\n'), command).toEqual([expect.stringContaining(`svc: svc ${command} works on the SQLite file; this svc uses PostgreSQL: `)]);
      expect(refused.stderr, command).toContain(advice);
      expect(refused.stderr, command).not.toContain(password);
    }
    expect(existsSync(path.join(servers.dir, 'backups'))).toBe(false);
    expect(await emails()).toEqual(['kept@example.com']);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  }, SPAWNS_TIMEOUT);
});
