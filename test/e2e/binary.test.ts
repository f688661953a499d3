import { expect, test } from 'bun:test';
import path from 'node:path';
import { tempDir } from '../helpers/app.ts';
import { MAIN, REPO_ROOT, runCli } from '../helpers/cli.ts';
import { spawnServer } from '../helpers/server.ts';

// The binary is built from the same source, but `bun build --compile` transforms the code, and
// Elysia reads its handlers' and schemas' code: a build option can change what svc answers.
test('the compiled binary validates query numbers as the source does: a limit out of bounds is 400', async () => {
  const tmp = tempDir('svc-binary-');
  try {
    const binary = path.join(tmp.dir, 'svc');
    const build = Bun.spawnSync([process.execPath, path.join(REPO_ROOT, 'scripts/build.ts'), binary], { cwd: REPO_ROOT, stdout: 'pipe', stderr: 'pipe' });
    expect(build.exitCode, build.stderr.toString()).toBe(0);
    const dataDir = path.join(tmp.dir, 'data');
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
  } finally {
    tmp.remove();
  }
}, 120_000);
