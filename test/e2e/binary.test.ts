import { afterAll, beforeAll, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { tempDir } from '../helpers/app.ts';
import { MAIN, REPO_ROOT, runCli } from '../helpers/cli.ts';
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
test("the compiled binary's change stamp reads a mapping of the WAL index: a key revoked by its CLI is refused on the next request", async () => {
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
