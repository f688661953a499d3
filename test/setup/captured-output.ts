// Loaded before the test files by bunfig.toml ([test] preload). What tests and the servers they run
// write (log lines, warnings, a child process's output) is kept, not printed: a failing test or hook
// carries it in its failure message, a passing one shows nothing. Captured: console.*, writes to
// process.stdout and process.stderr, and children spawned with Bun.spawn/spawnSync whose output
// would go to this terminal (they get a pipe, read into the capture). test/test-output.test.ts
// runs a noisy test file through `bun test` to hold this in place.
import * as bunTest from 'bun:test';
import { mock } from 'bun:test';
import { format } from 'node:util';

/** Characters kept since the last test ended, at least: the oldest are dropped at twice this (bounded memory, cut now and then). */
const MAX_CAPTURED = 1 << 20;
let captured = '';
let dropped = 0;

function capture(text: string): void {
  captured += text;
  if (captured.length > 2 * MAX_CAPTURED) {
    dropped += captured.length - MAX_CAPTURED;
    captured = captured.slice(-MAX_CAPTURED);
  }
}

/** What was captured since the last test ended, emptied. */
function takeCaptured(): string {
  const text = (dropped ? `[${dropped} earlier characters dropped]\n` : '') + captured;
  captured = '';
  dropped = 0;
  return text;
}

const textOf = (chunk: unknown): string => (typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8'));

const realStderrWrite = process.stderr.write.bind(process.stderr);
for (const stream of [process.stdout, process.stderr]) {
  stream.write = ((chunk: unknown, encoding?: unknown, callback?: unknown) => {
    capture(textOf(chunk));
    const done = typeof encoding === 'function' ? encoding : callback;
    if (typeof done === 'function') queueMicrotask(() => done());
    return true;
  }) as typeof stream.write;
}
// Bun's console writes to the file descriptors itself, not through process.stdout.
for (const method of ['log', 'info', 'warn', 'error', 'debug', 'trace', 'dir'] as const) {
  console[method] = (...args: unknown[]) => capture(format(...args) + '\n');
}

/** Reads a child's output into the capture, until it ends or fails. */
async function drain(stream: ReadableStream<Uint8Array>): Promise<void> {
  const decoder = new TextDecoder();
  try {
    for await (const chunk of stream) capture(decoder.decode(chunk, { stream: true }));
  } catch {
    // The child's pipe broke: what it wrote until then is kept.
  }
}

type SpawnOptions = { stdout?: unknown; stderr?: unknown; stdio?: unknown[] } & Record<string, unknown>;

/**
 * Spawn options with every output the child would share with this process (Bun's default for
 * stderr, 'inherit', or `stdio` entries) replaced by 'pipe'; returns which ones it replaced.
 */
function pipedOutputs(options: SpawnOptions): { options: SpawnOptions; piped: ('stdout' | 'stderr')[] } {
  const copy: SpawnOptions = { ...options };
  const piped: ('stdout' | 'stderr')[] = [];
  if (Array.isArray(copy.stdio)) {
    copy.stdio = [...copy.stdio];
    for (const [fd, name] of [[1, 'stdout'], [2, 'stderr']] as const) {
      if (copy.stdio[fd] === 'inherit' || (fd === 2 && copy.stdio[fd] === undefined)) {
        copy.stdio[fd] = 'pipe';
        piped.push(name);
      }
    }
    return { options: copy, piped };
  }
  if (copy.stdout === 'inherit') {
    copy.stdout = 'pipe';
    piped.push('stdout');
  }
  if (copy.stderr === undefined || copy.stderr === 'inherit') {
    copy.stderr = 'pipe';
    piped.push('stderr');
  }
  return { options: copy, piped };
}

/** Bun.spawn's two call forms: (cmd, options) and ({ cmd, ...options }). */
function spawnArguments(args: unknown[]): { cmd: unknown; options: SpawnOptions } {
  if (Array.isArray(args[0])) return { cmd: args[0], options: (args[1] ?? {}) as SpawnOptions };
  const { cmd, ...options } = args[0] as SpawnOptions & { cmd: unknown };
  return { cmd, options };
}

const realSpawn = Bun.spawn;
const realSpawnSync = Bun.spawnSync;
Bun.spawn = ((...args: unknown[]) => {
  const { cmd, options } = spawnArguments(args);
  const { options: piped, piped: names } = pipedOutputs(options);
  const proc = (realSpawn as (cmd: unknown, options: unknown) => Bun.Subprocess)(cmd, piped);
  if (names.length === 0) return proc;
  // `exited` waits for the output too, so a test that awaits the child finds all of it captured.
  const drained = Promise.all(names.map((name) => drain(proc[name] as ReadableStream<Uint8Array>)));
  Object.defineProperty(proc, 'exited', { value: Promise.all([proc.exited, drained]).then(([code]) => code) });
  return proc;
}) as typeof Bun.spawn;
Bun.spawnSync = ((...args: unknown[]) => {
  const { cmd, options } = spawnArguments(args);
  const { options: piped, piped: names } = pipedOutputs(options);
  const result = (realSpawnSync as (cmd: unknown, options: unknown) => Bun.SyncSubprocess)(cmd, piped);
  for (const name of names) capture(result[name]?.toString('utf8') ?? '');
  return result;
}) as typeof Bun.spawnSync;

/** `error` with the captured output appended to its message (what the test runner prints for a failure). */
function withCapturedOutput(error: unknown, what: string): unknown {
  const output = takeCaptured();
  if (output === '') return error;
  const note = `\n\n── output captured during this ${what} ──\n${output.trimEnd()}\n── end of captured output ──`;
  if (error instanceof Error) {
    error.message += note;
    return error;
  }
  return new Error(String(error) + note);
}

type Body = (...args: unknown[]) => unknown;

/** The test body running now (a number per run), or 0; still set after the runner cut it off at its timeout. */
let runningBody = 0;
let bodyRuns = 0;

/**
 * `fn` run as the runner would run it, its failure (a throw, a rejection) carrying the output
 * captured since the last test ended; a test's output is emptied when it ends either way. A body
 * that settles after its timeout touches nothing: another test is running by then. Always async:
 * an error thrown synchronously and thrown again from a synchronous catch gets a new stack (the
 * runner would point at this file), one thrown again from an async function keeps its own.
 */
function reporting(fn: Body, what: 'test' | 'hook'): Body {
  const wrapped = async function (this: unknown, ...args: unknown[]) {
    const run = what === 'test' ? (runningBody = ++bodyRuns) : 0;
    const current = () => run === 0 || run === runningBody;
    try {
      const result = await fn.apply(this, args);
      if (run !== 0 && current()) {
        runningBody = 0;
        takeCaptured();
      }
      return result;
    } catch (error) {
      if (!current()) throw error;
      if (run !== 0) runningBody = 0;
      throw withCapturedOutput(error, what);
    }
  };
  // The runner reads a body's arity (a `done` callback parameter): keep it.
  Object.defineProperty(wrapped, 'length', { value: fn.length });
  return wrapped;
}

type TestFn = ((name: unknown, fn?: unknown, options?: unknown) => unknown) & Record<string, unknown>;

/** Modifiers that are test functions themselves, and those that return one (`test.if(cond)(...)`, `test.each(table)(...)`). */
const TEST_MODIFIERS = ['skip', 'only', 'todo', 'failing', 'concurrent', 'serial'];
const TEST_FACTORIES = ['if', 'skipIf', 'todoIf', 'failingIf', 'concurrentIf', 'serialIf', 'each'];

/** `test` (or `it`) whose bodies report their output, its modifiers doing the same. */
function reportingTest(original: TestFn, modifiers = true): TestFn {
  const wrapped = ((name: unknown, fn?: unknown, options?: unknown) =>
    original(name, typeof fn === 'function' ? reporting(fn as Body, 'test') : fn, options)) as TestFn;
  if (!modifiers) return wrapped;
  // Read from `original` only when used: some throw when read (`test.only` under CI=true).
  for (const key of TEST_MODIFIERS) Object.defineProperty(wrapped, key, { get: () => reportingTest(original[key] as TestFn, false) });
  for (const key of TEST_FACTORIES) {
    Object.defineProperty(wrapped, key, {
      get: () => {
        const factory = original[key] as (...args: unknown[]) => TestFn;
        return (...args: unknown[]) => reportingTest(factory.apply(original, args), false);
      },
    });
  }
  return wrapped;
}

type Hook = (fn: Body, options?: unknown) => void;
const reportingHook = (original: Hook): Hook => (fn, options) => original(reporting(fn, 'hook'), options);

const test = reportingTest(bunTest.test as unknown as TestFn);
mock.module('bun:test', () => ({
  ...bunTest,
  test,
  it: test,
  beforeAll: reportingHook(bunTest.beforeAll as Hook),
  beforeEach: reportingHook(bunTest.beforeEach as Hook),
  afterEach: reportingHook(bunTest.afterEach as Hook),
  afterAll: reportingHook(bunTest.afterAll as Hook),
}));

// A test cut off at its timeout fails without its body settling, so its failure message (the
// runner's) cannot carry the output: it is printed here, just before the runner's line for it.
bunTest.afterEach(() => {
  if (runningBody === 0) return;
  runningBody = 0;
  const output = takeCaptured();
  if (output !== '') realStderrWrite(`── output captured during the test cut off at its timeout ──\n${output.trimEnd()}\n── end of captured output ──\n`);
});
