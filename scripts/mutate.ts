/**
 * `npm run mutate [-- <filter>...] [--list | --check] [--timeout <seconds>]`: plants each bug listed in
 * scripts/mutants.ts, one at a time, runs the tests named for it and reports its fate:
 *
 *   killed    some test failed: the suite notices this bug
 *   survived  every test passed with the bug in place: a test is missing
 *   stale     the snippet is not in the file (or not exactly once), or a test file is missing:
 *             the code moved on and the mutant must be updated
 *
 * Exits 1 if any mutant survived or is stale. The work happens in a temporary copy of the repository
 * (node_modules linked), so the working tree is never modified, whatever happens to this process;
 * the copy is removed on exit, Ctrl-C and crash (and, after a kill -9, by the next run). How to add
 * a mutant: CONTRIBUTING.md.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { mutants, type Mutant } from './mutants.ts';
import { startThrowawayPostgres, type ThrowawayPostgres } from './postgres-throwaway.ts';

const ROOT = path.resolve(import.meta.dir, '..');
/** Never copied: dependencies are linked, the rest is build output, local data or VCS state. */
const NOT_COPIED = new Set(['node_modules', '.git', 'dist', 'data', 'test-output']);
/** Where the tests that need a PostgreSQL server live (test/storage/ runs every engine under test). */
const POSTGRES_TESTS = ['test/postgres/', 'test/storage/'];
/** The PostgreSQL engine's records, held to their contract by test/storage/ on PostgreSQL. */
const POSTGRES_ENGINE = 'src/storage/postgres/';

type Fate =
  | { kind: 'killed'; by: string[]; timedOut: boolean }
  | { kind: 'survived' }
  | { kind: 'stale'; reason: string }
  | { kind: 'not-observable'; reason: string };

interface Options {
  filters: string[];
  list: boolean;
  /** Only look for stale mutants; plant nothing, run no test. */
  check: boolean;
  timeoutMs: number;
}

function parseArgs(argv: string[]): Options {
  const options: Options = { filters: [], list: false, check: false, timeoutMs: 300_000 };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--list') options.list = true;
    else if (arg === '--check') options.check = true;
    else if (arg === '--timeout') options.timeoutMs = Number(argv[++i]) * 1000;
    else if (arg.startsWith('-')) fail(`unknown option ${arg}; usage: npm run mutate -- [--list | --check] [--timeout <seconds>] [id-substring...]`);
    else options.filters.push(arg);
  }
  if (!Number.isFinite(options.timeoutMs) || options.timeoutMs <= 0) fail('--timeout needs a positive number of seconds');
  return options;
}

function fail(message: string): never {
  console.error(`mutate: ${message}`);
  process.exit(2);
}

/** Mistakes in the list itself (not staleness): they stop the run before anything is planted. */
function checkList(list: Mutant[]): void {
  const seen = new Set<string>();
  for (const m of list) {
    const where = `mutant ${JSON.stringify(m.id)} in scripts/mutants.ts`;
    if (!/^[a-z0-9]+(-[a-z0-9]+)*$/.test(m.id)) fail(`${where}: the id must be kebab-case`);
    if (seen.has(m.id)) fail(`${where}: duplicate id`);
    seen.add(m.id);
    if (!m.bug.trim()) fail(`${where}: describe the planted bug in "bug"`);
    if (m.original === m.replacement) fail(`${where}: replacement equals original`);
    if (m.original.length === 0) fail(`${where}: empty original snippet`);
    if (m.tests.length === 0 && !m.notObservable) fail(`${where}: name the test files that must catch it`);
    if (m.notObservable !== undefined && !m.notObservable.trim()) fail(`${where}: notObservable needs a reason`);
  }
}

function occurrences(text: string, snippet: string): number {
  let count = 0;
  for (let at = text.indexOf(snippet); at !== -1; at = text.indexOf(snippet, at + 1)) count++;
  return count;
}

/** Why the mutant can no longer be planted, or null when it can. */
function staleness(workspace: string, m: Mutant): string | null {
  const file = path.join(workspace, m.file);
  if (!existsSync(file)) return `${m.file} does not exist`;
  const count = occurrences(readFileSync(file, 'utf8'), m.original);
  if (count === 0) return `its original snippet is no longer in ${m.file}`;
  if (count > 1) return `its original snippet occurs ${count} times in ${m.file}; lengthen it so it names one place`;
  const missing = m.tests.filter((test) => !existsSync(path.join(workspace, test)));
  if (missing.length > 0) return `test file(s) not found: ${missing.join(', ')}`;
  return null;
}

let workspace: string | null = null;
let child: ChildProcess | null = null;
let postgres: ThrowawayPostgres | null = null;

function cleanUp(): void {
  postgres?.stop();
  postgres = null;
  if (child && child.exitCode === null && child.pid) {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  if (workspace) rmSync(workspace, { recursive: true, force: true });
  workspace = null;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** Copies left by a run that was killed outright (kill -9 leaves no chance to clean up). */
function removeAbandonedWorkspaces(): void {
  for (const name of readdirSync(tmpdir())) {
    const pid = /^svc-mutate-(\d+)-/.exec(name)?.[1];
    if (pid && !alive(Number(pid))) rmSync(path.join(tmpdir(), name), { recursive: true, force: true });
  }
}

function makeWorkspace(): string {
  removeAbandonedWorkspaces();
  const dir = mkdtempSync(path.join(tmpdir(), `svc-mutate-${process.pid}-`));
  workspace = dir;
  cpSync(ROOT, dir, { recursive: true, filter: (source) => !NOT_COPIED.has(path.relative(ROOT, source).split(path.sep)[0]!) });
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  return dir;
}

/** `bun test` on the given files in the workspace: exit code, output, and whether it hit the timeout. */
function runTests(dir: string, tests: string[], timeoutMs: number): Promise<{ code: number | null; output: string; timedOut: boolean }> {
  return new Promise((resolve) => {
    // Each test's own limit as `npm test` sets it (package.json): Bun's default of 5 s cut off spawned-process tests under load.
    const proc = spawn(process.execPath, ['test', '--timeout', '30000', ...tests.map((t) => `./${t}`)], {
      cwd: dir,
      env: { ...process.env, CI: 'true', FORCE_COLOR: '0', NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true, // its own process group, so a timeout also ends the servers it spawned
    });
    child = proc;
    let output = '';
    proc.stdout!.on('data', (chunk) => (output += chunk));
    proc.stderr!.on('data', (chunk) => (output += chunk));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-proc.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }, timeoutMs);
    proc.on('close', (code) => {
      clearTimeout(timer);
      child = null;
      resolve({ code, output, timedOut });
    });
  });
}

const failedTests = (output: string) => [...output.matchAll(/^\(fail\) (.+?)(?: \[[\d.]+m?s\])?$/gm)].map((match) => match[1]!);

async function plant(dir: string, m: Mutant, timeoutMs: number): Promise<Fate> {
  const file = path.join(dir, m.file);
  const original = readFileSync(file, 'utf8');
  writeFileSync(file, original.replace(m.original, () => m.replacement));
  try {
    const { code, output, timedOut } = await runTests(dir, m.tests, timeoutMs);
    if (code === 0 && !timedOut) return { kind: 'survived' };
    return { kind: 'killed', by: failedTests(output), timedOut };
  } finally {
    writeFileSync(file, original);
  }
}

const pad = (text: string, width: number) => text.padEnd(width);

async function main(): Promise<number> {
  const options = parseArgs(process.argv.slice(2));
  checkList(mutants);
  const selected = options.filters.length === 0 ? mutants : mutants.filter((m) => options.filters.some((f) => m.id.includes(f)));
  if (selected.length === 0) fail(`no mutant id contains ${options.filters.join(' or ')}`);
  if (options.list) {
    for (const m of selected) console.log(`${pad(m.id, 44)} ${m.file}${m.notObservable ? '  (not observable)' : ''}\n${' '.repeat(45)}${m.bug}`);
    return 0;
  }

  // Checking reads the working tree itself; planting happens only in a temporary copy of it.
  const dir = options.check ? ROOT : makeWorkspace();
  const fates = new Map<string, Fate>();
  for (const m of selected) {
    const stale = staleness(dir, m);
    if (stale) fates.set(m.id, { kind: 'stale', reason: stale });
    else if (m.notObservable) fates.set(m.id, { kind: 'not-observable', reason: m.notObservable });
  }
  if (options.check) {
    const stale = selected.filter((m) => fates.get(m.id)?.kind === 'stale');
    for (const m of stale) console.log(`STALE     ${m.id}: ${(fates.get(m.id) as { reason: string }).reason}`);
    console.log(`${selected.length} mutants checked, ${stale.length} stale`);
    return stale.length > 0 ? 1 : 0;
  }
  const runnable = selected.filter((m) => !fates.has(m.id));

  // Tests of the PostgreSQL engine are skipped without a server (test/helpers/postgres.ts), and the
  // storage contract tests run on SQLite alone: a mutant of that engine would survive them unseen.
  // They get a throwaway one, as with npm run test:postgres.
  const needsPostgres = (m: Mutant) => m.file.startsWith(POSTGRES_ENGINE) || m.tests.some((test) => POSTGRES_TESTS.some((dir) => test.startsWith(dir)));
  if (!process.env.SVC_TEST_DATABASE_URL && runnable.some(needsPostgres)) {
    try {
      postgres = startThrowawayPostgres();
    } catch (error) {
      fail(`mutants of ${POSTGRES_ENGINE} or whose tests are in ${POSTGRES_TESTS.join(' or ')} need PostgreSQL: ${(error as Error).message}; or set SVC_TEST_DATABASE_URL, or leave those mutants out`);
    }
    process.env.SVC_TEST_DATABASE_URL = postgres.url;
  }

  // Mutants are only meaningful against a suite that passes without them.
  const baselineTests = [...new Set(runnable.flatMap((m) => m.tests))].sort();
  if (baselineTests.length > 0) {
    console.log(`baseline: ${baselineTests.length} test files without any mutant...`);
    const baseline = await runTests(dir, baselineTests, options.timeoutMs);
    if (baseline.code !== 0 || baseline.timedOut) {
      console.error(baseline.output.split('\n').slice(-40).join('\n'));
      fail(`the tests fail without any mutant (${baseline.timedOut ? 'timeout' : `exit ${baseline.code}`}); fix them first`);
    }
  }

  const started = Date.now();
  for (const [i, m] of runnable.entries()) {
    process.stdout.write(`[${i + 1}/${runnable.length}] ${m.id} ... `);
    const fate = await plant(dir, m, options.timeoutMs);
    fates.set(m.id, fate);
    if (fate.kind === 'killed') console.log(`killed${fate.timedOut ? ' (timeout)' : ''}${fate.by.length ? ` by: ${fate.by[0]}${fate.by.length > 1 ? ` (+${fate.by.length - 1})` : ''}` : ''}`);
    else console.log('SURVIVED');
  }

  const by = (kind: Fate['kind']) => selected.filter((m) => fates.get(m.id)!.kind === kind);
  const [killed, survived, stale, unobservable] = [by('killed'), by('survived'), by('stale'), by('not-observable')];
  if (survived.length + stale.length + unobservable.length > 0) console.log('');
  for (const m of survived) console.log(`SURVIVED  ${m.id}: ${m.bug}\n          ${m.file}; tests run: ${m.tests.join(' ')}`);
  for (const m of stale) console.log(`STALE     ${m.id}: ${(fates.get(m.id) as { reason: string }).reason}\n          update it in scripts/mutants.ts (file, original, tests)`);
  for (const m of unobservable) console.log(`not observable  ${m.id}: ${m.notObservable}`);
  const observable = killed.length + survived.length;
  const ratio = observable === 0 ? 100 : (100 * killed.length) / observable;
  console.log(
    `\n${killed.length} killed, ${survived.length} survived, ${stale.length} stale, ${unobservable.length} not observable; ` +
      `kill ratio ${ratio.toFixed(1)}% (${killed.length}/${observable}) in ${Math.round((Date.now() - started) / 1000)} s`,
  );
  return survived.length > 0 || stale.length > 0 ? 1 : 0;
}

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    cleanUp();
    console.error(`\nmutate: stopped by ${signal}; the working tree was never modified`);
    process.exit(130);
  });
}
process.on('exit', cleanUp);

main()
  .then((code) => {
    cleanUp();
    process.exit(code);
  })
  .catch((error) => {
    cleanUp();
    console.error(error);
    process.exit(2);
  });
