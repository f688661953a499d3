// Choosing the engine (issue 30 item 1) where no PostgreSQL answers: the start stops with one clear
// line and never shows the password. test/postgres/cli.test.ts has the cases a real server answers.
import { describe, expect, test } from 'bun:test';
import { runCli } from './helpers/cli.ts';

describe('--database-url that cannot be reached', () => {
  test('nothing listening: exit 1, one line naming the URL without its credentials, no password anywhere', async () => {
    // Port 1 on loopback: nothing listens there.
    const refused = await runCli(['migrate', '--database-url', 'postgres://svc:Hidden-Pass-7@127.0.0.1:1/svc'], { timeoutMs: 20_000 });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr.trim().split('\n')).toEqual(['svc: cannot use PostgreSQL at postgres://127.0.0.1:1/svc: the connection was refused, or the host name does not resolve']);
    expect(refused.stderr).not.toContain('Hidden-Pass-7');
  });

  test('a malformed URL is refused as a setting (exit 2) without repeating it', async () => {
    const refused = await runCli(['migrate'], { env: { SVC_DATABASE_URL: 'postgres://svc:Hidden-Pass-7@127.0.0.1:1' } });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('invalid SVC_DATABASE_URL');
    expect(refused.stderr).not.toContain('Hidden-Pass-7');
  });
});

describe('backup, restore and doctor on PostgreSQL', () => {
  // The advice is given before anything is connected to: nothing listens on port 1.
  const url = 'postgres://svc:Hidden-Pass-7@127.0.0.1:1/svc';
  test('svc backup explains pg_dump, svc restore refuses with pg_restore, svc doctor names the server\'s tools; exit 1, no password', async () => {
    const expected = { backup: 'pg_dump --format=custom', restore: 'pg_restore --no-owner', doctor: 'pg_amcheck' };
    for (const [command, advice] of Object.entries(expected)) {
      const args = command === 'doctor' ? [command] : [command, '/tmp/svc-never-written.db'];
      const refused = await runCli([...args, '--database-url', url]);
      expect(refused.code).toBe(1);
      expect(refused.stdout).toBe('');
      expect(refused.stderr.trim().split('\n')).toEqual([expect.stringContaining(`svc: svc ${command} works on the SQLite file; this svc uses PostgreSQL: `)]);
      expect(refused.stderr).toContain(advice);
      expect(refused.stderr).not.toContain('Hidden-Pass-7');
    }
  });
});
