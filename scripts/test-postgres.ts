/**
 * `npm run test:postgres`: starts a throwaway PostgreSQL (scripts/postgres-throwaway.ts), runs the
 * suite against it (scripts/postgres-suite.ts: every test file but the browser tests) with its URL in SVC_TEST_DATABASE_URL and SVC_TEST_ENGINE=postgres (the test apps
 * and spawned servers then run on PostgreSQL, a new database each), ends with one
 * "N passed, N failed" line as .ci/run does, and removes the server, also on a failure or Ctrl-C.
 * Exits 0 only when every test passed.
 *
 *   npm run test:postgres                                   the suite
 *   npm run test:postgres -- test/postgres/migrate.test.ts  those files instead
 */
import { postgresSuite } from './postgres-suite.ts';
import { startThrowawayPostgres, stopOnExit } from './postgres-throwaway.ts';

/** Enough of the end of the output to find bun's summary in. */
const TAIL = 64 * 1024;

/** Forwards a child's stream to ours, keeping its tail. */
async function forward(stream: ReadableStream<Uint8Array>, to: NodeJS.WriteStream): Promise<string> {
  const decoder = new TextDecoder();
  let tail = '';
  for await (const chunk of stream) {
    to.write(chunk);
    tail = (tail + decoder.decode(chunk, { stream: true })).slice(-TAIL);
  }
  return tail;
}

const count = (output: string, word: 'pass' | 'fail') => Number([...output.matchAll(new RegExp(`^ *(\\d+) ${word}$`, 'gm'))].at(-1)?.[1] ?? 0);

async function main(): Promise<number> {
  const started = Date.now();
  const server = startThrowawayPostgres();
  stopOnExit(server);
  console.log(`PostgreSQL ready in ${((Date.now() - started) / 1000).toFixed(1)} s (${server.dir})`);
  try {
    const files = process.argv.length > 2 ? process.argv.slice(2) : postgresSuite().map((file) => `./${file}`);
    // Each test's own limit as `npm test` sets it (package.json). The whole suite runs its files in
    // two processes at once: its tests wait on servers, databases and timers more than on the CPU,
    // and one after another they took half of CI's time (SVC_TEST_POSTGRES_PARALLEL=1: one process).
    const parallel = process.env.SVC_TEST_POSTGRES_PARALLEL ?? '2';
    const tests = Bun.spawn([process.execPath, 'test', '--timeout', '30000', `--parallel=${parallel}`, ...files], {
      env: { ...process.env, SVC_TEST_DATABASE_URL: server.url, SVC_TEST_ENGINE: 'postgres' },
      stdin: 'ignore',
      stdout: 'pipe',
      stderr: 'pipe',
    });
    const [out, err, status] = await Promise.all([forward(tests.stdout, process.stdout), forward(tests.stderr, process.stderr), tests.exited]);
    const passed = count(out + err, 'pass');
    // A run that fails without a failing test (a crash, no test file found) still fails.
    const failed = count(out + err, 'fail') || (status === 0 ? 0 : 1);
    console.log(`${passed} passed, ${failed} failed`);
    return failed === 0 && status === 0 ? 0 : 1;
  } finally {
    server.stop();
  }
}

main()
  .then((code) => process.exit(code))
  .catch((error) => {
    console.error(`test:postgres: ${error instanceof Error ? error.message : error}`);
    console.log('0 passed, 1 failed');
    process.exit(1);
  });
