import { describe, expect, test } from 'bun:test';
import { REPO_ROOT } from './helpers/cli.ts';

// bunfig.toml preloads test/setup/captured-output.ts: what tests write is shown only for the tests
// that fail. Checked by running a noisy test file through `bun test` in the repository, as `npm
// test` does: without bunfig.toml, or with its preload not applied, the passing run prints it all.

const FIXTURE = './test/fixtures/noisy-tests.ts';
const WRITTEN = ['fixture-console-log', 'fixture-console-error', 'fixture-console-warn', 'fixture-stdout-write', 'fixture-stderr-write', 'fixture-logger', 'fixture-child-stderr'];

async function runFixture(env: Record<string, string> = {}): Promise<{ code: number; output: string }> {
  const proc = Bun.spawn([process.execPath, 'test', FIXTURE], {
    cwd: REPO_ROOT,
    // CI=true as in .ci/run: some of bun:test's functions behave otherwise there (`test.only` throws when read).
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', NO_COLOR: '1', CI: 'true', ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, output: stdout + stderr };
}

describe('test output (bunfig.toml [test] preload)', () => {
  test('a passing test file prints none of what it wrote: log lines, warnings, a child process’s stderr', async () => {
    const run = await runFixture();
    expect(run.output).toContain('(pass) writes log lines');
    expect(run.code).toBe(0);
    for (const written of [...WRITTEN, 'fixture-before-all']) expect(run.output).not.toContain(written);
  });

  test('a failing test shows what was written since the test before it ended, in its failure message', async () => {
    const run = await runFixture({ FIXTURE_FAIL: '1' });
    expect(run.code).toBe(1);
    expect(run.output).toContain('(fail) writes log lines');
    const start = run.output.indexOf('── output captured during this test ──');
    const end = run.output.indexOf('── end of captured output ──');
    expect(start).toBeGreaterThan(-1);
    const captured = run.output.slice(start, end);
    for (const written of [...WRITTEN, 'fixture-before-all']) expect(captured).toContain(written);
    // A failure thrown synchronously still points at the test's own line, not at the capture.
    const syncFailure = run.output.slice(run.output.indexOf('(fail) writes log lines'), run.output.indexOf('(fail) fails synchronously'));
    expect(syncFailure).toContain('fixture-sync');
    expect(syncFailure).toMatch(/\n\s+at .*test\/fixtures\/noisy-tests\.ts:\d+/);
  });

  test('a test cut off at its timeout (its failure message is the runner’s) has its output printed with its failure', async () => {
    const run = await runFixture({ FIXTURE_TIMEOUT: '1' });
    expect(run.code).toBe(1);
    expect(run.output).toContain('(fail) writes, then never ends');
    const cutOff = run.output.indexOf('── output captured during the test cut off at its timeout ──');
    expect(cutOff).toBeGreaterThan(-1);
    expect(run.output.slice(cutOff)).toStartWith(`── output captured during the test cut off at its timeout ──\n${JSON.stringify({ level: 'info', msg: 'fixture-cut-off' })}\n`);
    expect(run.output).not.toContain('fixture-console-log');
  });
});
