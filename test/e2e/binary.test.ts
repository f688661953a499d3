import { afterAll, beforeAll, expect, test } from 'bun:test';
import { Database } from 'bun:sqlite';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { tempDir } from '../helpers/app.ts';
import { MAIN, REPO_ROOT, runCli } from '../helpers/cli.ts';
import { onceHeard, POSTGRES_MODE, testSqliteOnly } from '../helpers/engine.ts';
import { scanPayload, signedInit } from '../helpers/probe.ts';
import { spawnServer } from '../helpers/server.ts';

let tmp: ReturnType<typeof tempDir>;
let binary: string;
beforeAll(() => {
  tmp = tempDir('svc-binary-');
  binary = path.join(tmp.dir, 'svc');
  const build = Bun.spawnSync([process.execPath, path.join(REPO_ROOT, 'scripts/build.ts'), binary], { cwd: REPO_ROOT, stdout: 'pipe', stderr: 'pipe' });
  expect(build.exitCode, build.stderr.toString()).toBe(0);
}, 120_000);
afterAll(() => tmp.remove());

// The binary is built from the same source, but `bun build --compile` transforms the code, and
// Elysia reads its handlers' and schemas' code: a build option can change what svc answers.
test('the compiled binary validates query numbers as the source does: a limit out of bounds is 400', async () => {
  const dataDir = path.join(tmp.dir, 'data-limits');
  const key = (await runCli(['keys', 'create', '--scopes', 'admin', '--data-dir', dataDir], { command: [binary] })).json.key as string;
  for (const command of [[binary], [process.execPath, MAIN]]) {
    const server = await spawnServer({ dataDir, command });
    try {
      for (const [query, detail] of [
        ['limit=9999', 'limit: Expected number to be less or equal to 500'],
        ['limit=0', 'limit: Expected number to be greater or equal to 1'],
      ]) {
        const res = await fetch(`${server.url}/api/v1/admin/faqs?storeId=st_x&${query}`, { headers: { authorization: `Bearer ${key}` } });
        expect(res.status, `${command[0]} ${query}`).toBe(400);
        expect(await res.json()).toEqual({ error: 'invalid_request', detail });
      }
    } finally {
      expect(await server.stop()).toBe(0);
    }
  }
}, 120_000);

// The change stamp maps SQLite's WAL index through bun:ffi (libc's mmap), which must work in the
// binary too: the server reads a read-only shared mapping of -shm, not the pread fallback.
testSqliteOnly('PostgreSQL tells the server of changes by LISTEN/NOTIFY (the next test), with no WAL index to map', "the compiled binary's change stamp reads a mapping of the WAL index: a key revoked by its CLI is refused on the next request", async () => {
  const dataDir = path.join(tmp.dir, 'data-revoke');
  const created = (await runCli(['keys', 'create', '--scopes', 'admin', '--data-dir', dataDir], { command: [binary] })).json;
  const server = await spawnServer({ dataDir, command: [binary] });
  try {
    const shm = `${path.join(dataDir, 'svc.db')}-shm`;
    const maps = readFileSync(`/proc/${server.proc.pid}/maps`, 'utf8').split('\n');
    expect(maps.filter((line) => line.endsWith(` ${shm}`) && line.split(/\s+/)[1] === 'r--s')).toHaveLength(1);
    const listKeys = () => fetch(`${server.url}/api/v1/admin/keys`, { headers: { authorization: `Bearer ${created.key}` } });
    expect((await listKeys()).status).toBe(200);
    expect((await runCli(['keys', 'revoke', created.id, '--data-dir', dataDir], { command: [binary] })).code).toBe(0);
    expect((await listKeys()).status).toBe(401);
  } finally {
    expect(await server.stop()).toBe(0);
  }
}, 120_000);

// On PostgreSQL the server hears of another process's commit by LISTEN/NOTIFY on a connection of
// its own (src/storage/postgres/changes.ts), a few ms after the commit: the binary must keep it too.
test.skipIf(!POSTGRES_MODE)('the compiled binary on PostgreSQL hears a key revoked by its CLI: refused within a second', async () => {
  const dataDir = path.join(tmp.dir, 'data-revoke-pg');
  const created = (await runCli(['keys', 'create', '--scopes', 'admin', '--data-dir', dataDir], { command: [binary] })).json;
  const server = await spawnServer({ dataDir, command: [binary] });
  try {
    const listKeys = async () => (await fetch(`${server.url}/api/v1/admin/keys`, { headers: { authorization: `Bearer ${created.key}` } })).status;
    expect(await listKeys()).toBe(200);
    expect((await runCli(['keys', 'revoke', created.id, '--data-dir', dataDir], { command: [binary] })).code).toBe(0);
    expect(await onceHeard(listKeys, (status) => status !== 200)).toBe(401);
  } finally {
    expect(await server.stop()).toBe(0);
  }
}, 120_000);

// The roller runs in a Worker, a second entry point of the build (scripts/build.ts): the binary must
// start it from its embedded copy and fold scans into the rollups file.
// The dashboard's reads run in Workers too (src/storage/sqlite/scan-dashboard-workers.ts), a third entry point.
testSqliteOnly("the roller and the dashboard's reads run in Workers on SQLite; on PostgreSQL they run in the server's thread (the binary's PostgreSQL roller: test/postgres/serve.test.ts with SVC_E2E_BINARY)", "the compiled binary's roller Worker folds scans into the rollups file, and its dashboard Workers answer the stats", async () => {
  const dataDir = path.join(tmp.dir, 'data-roller');
  const created = (await runCli(['keys', 'create', '--scopes', 'probe:scan,dashboard:read', '--data-dir', dataDir], { command: [binary] })).json;
  const server = await spawnServer({ dataDir, command: [binary] });
  try {
    const scans = Array.from({ length: 3 }, (_, i) => scanPayload({ url: `https://shop.example.com/p/${i}` }));
    expect((await fetch(`${server.url}/api/v1/probe/scan-bulk`, signedInit(created.key, JSON.stringify({ scans }), Date.now()))).status).toBe(200);
    const watermark = () => {
      const rollups = new Database(path.join(dataDir, 'svc-rollups.db'), { readonly: true });
      try {
        return (rollups.query('SELECT watermark FROM scan_rollup_state').get() as { watermark: number }).watermark;
      } finally {
        rollups.close();
      }
    };
    // The roller runs every second; a binary that cannot start its Worker never moves the watermark.
    for (let waited = 0; watermark() < 3 && waited < 20_000; waited += 100) await Bun.sleep(100);
    expect(watermark()).toBe(3);
    const stats = await fetch(`${server.url}/api/v1/dashboard/stats?groupBy=country`, { headers: { authorization: `Bearer ${created.key}` } });
    expect(stats.status).toBe(200);
    expect(((await stats.json()) as { groups: { scans: number }[] }).groups.reduce((sum, group) => sum + group.scans, 0)).toBe(3);
  } finally {
    expect(await server.stop()).toBe(0);
  }
}, 120_000);
