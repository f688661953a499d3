import { afterEach, expect, test } from 'bun:test';
import type { Subprocess } from 'bun';
import { tempDir } from '../helpers/app.ts';
import { MAIN, REPO_ROOT, runCli } from '../helpers/cli.ts';
import { loadThenKill } from '../helpers/crash-load.ts';
import { engineEnv, queryDataDir } from '../helpers/engine.ts';
import { TELEMETRY, scanPayload, signedInit } from '../helpers/probe.ts';

const LOAD_MS = 1_500;
const CONNECTIONS = 32;

const procs: Subprocess[] = [];
const dirs: { remove(): void }[] = [];
afterEach(() => {
  for (const proc of procs.splice(0)) proc.kill(9);
  for (const dir of dirs.splice(0)) dir.remove();
});

/** Start `svc serve` on a free port and return it once it prints its listening line. */
async function serve(dataDir: string): Promise<{ proc: Subprocess<'ignore', 'pipe', 'inherit'>; url: string }> {
  const proc = Bun.spawn([process.execPath, MAIN, 'serve', '--http', '127.0.0.1:0', '--data-dir', dataDir], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', SVC_RATE_AGENT: '10000000', ...(await engineEnv(dataDir)) },
    stdout: 'pipe',
    stderr: 'inherit',
  });
  procs.push(proc);
  const reader = proc.stdout.getReader();
  let text = '';
  while (!text.includes('\n')) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`server exited before listening: ${text}`);
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return { proc, url: JSON.parse(text.split('\n')[0]!).url };
}

test('kill -9 mid-load loses no scan that was answered 204', async () => {
  const dir = tempDir('svc-crash-');
  dirs.push(dir);
  const created = await runCli(['keys', 'create', '--scopes', 'probe:scan', '--data-dir', dir.dir]);
  expect(created.code).toBe(0);
  const key: string = created.json.key;

  const first = await serve(dir.dir);
  const { acknowledged, failed } = await loadThenKill({
    send: (requestId) => fetch(`${first.url}${TELEMETRY}`, signedInit(key, JSON.stringify(scanPayload({ requestId })), Date.now())),
    okStatus: 204,
    kill: () => first.proc.kill(9),
    loadMs: LOAD_MS,
    connections: CONNECTIONS,
  });
  await first.proc.exited;
  expect(first.proc.signalCode).toBe('SIGKILL');
  expect(failed).toBe(0);
  expect(acknowledged.length).toBeGreaterThan(100);

  // Restart on the same data directory (and database): it recovers and serves again.
  const second = await serve(dir.dir);
  expect((await fetch(`${second.url}/healthz`)).status).toBe(200);
  const stored = new Set(((await queryDataDir(dir.dir, 'SELECT data FROM scans')) as { data: string }[]).map((row) => (JSON.parse(row.data) as { requestId: string }).requestId));
  const lost = acknowledged.filter((id) => !stored.has(id));
  expect(lost).toEqual([]);
  second.proc.kill('SIGTERM');
  expect(await second.proc.exited).toBe(0);
});
