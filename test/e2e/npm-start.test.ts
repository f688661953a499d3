import { describe, expect, test } from 'bun:test';
import { spawn } from 'node:child_process';
import { tempDir } from '../helpers/app.ts';
import { REPO_ROOT } from '../helpers/cli.ts';

/** Waits (polling every 50 ms) until `done()` holds or `timeoutMs` passes. */
async function until(done: () => boolean | Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    if (await done()) return true;
    await Bun.sleep(50);
  }
  return done();
}

const answers = (url: string) =>
  fetch(`${url}/healthz`).then(
    () => true,
    () => false,
  );

describe('npm start (the README quick start)', () => {
  test('SIGTERM to npm reaches svc: it shuts down gracefully and nothing is left serving', async () => {
    const data = tempDir('svc-npm-start-');
    // Its own process group, so whatever is left after the test can be killed with it.
    const npm = spawn('npm', ['start', '--', '--http', '127.0.0.1:0', '--data-dir', data.dir], { cwd: REPO_ROOT, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    npm.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    npm.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => npm.on('exit', (code) => resolve(code)));
    try {
      expect(await until(() => out.includes('"status":"listening"'), 20_000)).toBe(true);
      const url = JSON.parse(out.slice(out.indexOf('{"status":"listening"')).split('\n')[0]!).url as string;
      expect(await answers(url)).toBe(true);
      npm.kill('SIGTERM');
      await exited;
      expect(await until(() => err.includes('svc: SIGTERM received, shutting down'), 10_000)).toBe(true);
      expect(await until(async () => !(await answers(url)), 10_000)).toBe(true);
    } finally {
      try {
        process.kill(-npm.pid!, 'SIGKILL');
      } catch {
        // The group is gone already.
      }
      data.remove();
    }
  }, 60_000);
});
