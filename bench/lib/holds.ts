// How long background work holds the event loop: a setImmediate ticker runs beside the task and the
// gaps between its ticks are the holds. On a shared machine a gap also contains time the thread sat
// runnable while other processes had the CPU; Linux reports that wait per thread
// (/proc/thread-self/schedstat, field 2), so `held` subtracts it: what the task itself held,
// on the CPU or blocked in a system call (an fsync), whatever the machine's load. On a busy machine
// `held` still grows with what others do (the thread also sleeps while the GC's helper threads wait
// for a CPU, or while a write waits for a disk other processes keep busy), so `cpu` reports the
// thread's own CPU time between two ticks (CLOCK_THREAD_CPUTIME_ID): the work itself, which load
// does not change.
//
// Garbage collections inside a turn: with JavaScriptCore's GC log on (BUN_JSC_logGC=1, written to
// stderr as each collection runs; `withGcLog` re-runs a bench with it on and stderr in a file), the
// ticker notes how far the log had grown at each tick, so every collection is known by the turn it
// ran in. A turn with none is the task's own work; the CPU a turn with one used above the task's
// typical turn without one is what the collection cost the thread.
import { dlopen, FFIType, ptr } from 'bun:ffi';
import { closeSync, fstatSync, openSync, readFileSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface Holds {
  /** Longest gap between ticks (wall clock), ms. */
  wallMs: number;
  /** Longest gap minus the time the thread waited for a CPU during it, ms. */
  heldMs: number;
  /** 99th percentile of the held gaps, ms. */
  p99Ms: number;
  /** Most CPU time the thread used between two ticks, ms (NaN where the clock cannot be read). */
  cpuMs: number;
  /** The thread's CPU time over the whole task, ms (NaN where the clock cannot be read). */
  taskCpuMs: number;
  totalMs: number;
  /** The collections during the task, when the GC log is on (withGcLog). */
  gc?: GcInTurns;
}

export interface GcInTurns {
  /** Collections that ended during the task (eden: young objects only; full: the whole heap). */
  eden: number;
  full: number;
  /** The time the collections stopped the thread in all (JSC's pauses; the thread mostly sleeps through them), ms. */
  pausedMs: number;
  /** Most CPU the thread used in a turn without a collection: the task's own longest step, ms. */
  ownCpuMs: number;
  /** The CPU of the task's typical (median) step without a collection (turns of at least STEP_MIN_MS), ms. */
  medianOwnCpuMs: number;
  /** Most CPU the thread used in a turn with a collection, and the pauses in that turn, ms. */
  gcTurnCpuMs: number;
  gcTurnPausedMs: number;
  /** Turns over `GC_GOAL_MS` on CPU, and how many of them held a collection. */
  turnsOverGoal: number;
  turnsOverGoalWithGc: number;
  /** The CPU that turns with a collection used above the typical turn, as a share of the task's CPU. */
  share: number;
}

// The ticker allocates nothing per tick (no string, no BigInt): garbage of its own would start
// collections that the GC figures then count against the task.
const SCHEDSTAT = '/proc/thread-self/schedstat';
const schedstat = (() => {
  try {
    return { fd: openSync(SCHEDSTAT, 'r'), bytes: Buffer.alloc(128) };
  } catch {
    return null;
  }
})();
const SPACE = 0x20;
/** Milliseconds this thread has waited runnable for a CPU, the second field of its schedstat (0 where Linux does not say). */
function runQueueWaitMs(): number {
  if (!schedstat) return 0;
  const { fd, bytes } = schedstat;
  const length = readSync(fd, bytes, 0, bytes.length, 0);
  let at = bytes.indexOf(SPACE) + 1;
  let ns = 0;
  for (; at < length && bytes[at]! !== SPACE; at++) ns = ns * 10 + bytes[at]! - 0x30;
  return ns / 1e6;
}

const CLOCK_THREAD_CPUTIME_ID = 3;
const SEEK_CUR = 1;
const libc = (() => {
  try {
    return dlopen('libc.so.6', {
      clock_gettime: { args: [FFIType.i32, FFIType.ptr], returns: FFIType.i32 },
      lseek: { args: [FFIType.i32, FFIType.i64, FFIType.i32], returns: FFIType.i64_fast },
    }).symbols;
  } catch {
    return null;
  }
})();
/** Milliseconds of CPU this thread has used (Linux's per-thread clock through libc; NaN elsewhere). */
export const threadCpuMs: () => number = (() => {
  if (!libc) return () => NaN;
  // struct timespec as 32-bit words (little-endian): seconds low and high, nanoseconds. Over an
  // ArrayBuffer of its own: a small typed array's storage is the garbage collector's, and after a
  // collection clock_gettime wrote where the array no longer read.
  const timespec = new Uint32Array(new ArrayBuffer(16));
  const at = ptr(timespec);
  return () => (libc.clock_gettime(CLOCK_THREAD_CPUTIME_ID, at) === 0 ? (timespec[0]! + timespec[1]! * 2 ** 32) * 1000 + timespec[2]! / 1e6 : NaN);
})();

/** The turn length, on CPU, whose excess turns are counted in GcInTurns. */
const GC_GOAL_MS = 5;
/** Less CPU than this in a turn: the ticker alone, no step of the task. */
const STEP_MIN_MS = 0.2;
/** Set by withGcLog in the traced run: the file its stderr (with the GC log) goes to. */
const GC_LOG_ENV = 'SVC_BENCH_GC_LOG';
const gcLogFile = process.env.BUN_JSC_logGC ? process.env[GC_LOG_ENV] : undefined;
/** How many bytes of the GC log have been written (stderr is that file in the traced run). */
const gcLogSize = gcLogFile ? (libc ? () => Number(libc.lseek(2, 0, SEEK_CUR)) : () => fstatSync(2).size) : null;
/**
 * The log's prefix for this thread's heap: Workers (the WAL checkpointer) have heaps of their own
 * and log to the same stderr. Known from a collection made now, before any Worker starts.
 */
const ownHeap = gcLogFile
  ? (() => {
      Bun.gc(true);
      const heaps = [...readFileSync(gcLogFile, 'latin1').matchAll(/^\[GC<(0x[0-9a-f]+)>/gm)];
      if (heaps.length === 0) throw new Error('BUN_JSC_logGC is set but the GC log is empty');
      return `[GC<${heaps.at(-1)![1]}>`;
    })()
  : '';

/** Held gaps are counted in buckets of this many ms, up to HELD_BUCKETS of them (the last holds every longer gap). */
const HELD_BUCKET_MS = 0.001;
const HELD_BUCKETS = 100_000;
/** Turns the GC figures can record: those of at least STEP_MIN_MS on CPU or with a GC log line (a few per ms of the task's work). */
const RECORDED_TURNS = 1 << 21;

/**
 * The holds of the event loop while `task` runs. Everything the ticker keeps is allocated before
 * the task starts: a ticker that appended each turn to an array (millions of turns in a long task)
 * copied the array whenever it grew, and those copies were the longest turns it reported.
 */
export async function measureHolds(task: () => Promise<unknown>): Promise<Holds> {
  const heldCounts = new Uint32Array(HELD_BUCKETS);
  // Per recorded turn, with the GC log on: its CPU, and the log's size at its end (logAt[0]: at the start).
  const turnCpu = gcLogSize ? new Float64Array(RECORDED_TURNS) : null;
  const logAt = gcLogSize ? new Float64Array(RECORDED_TURNS + 1) : null;
  // From a collected and swept heap. After a collection JavaScriptCore sweeps the dead objects in
  // slices of up to 10 ms on the event loop, one every ~100 ms: the garbage of whatever ran before
  // (the bench's setup, the task before, its digest of the rollups) would be swept during this task
  // and count as its holds. A synchronous full collection sweeps everything at once.
  Bun.gc(true);
  if (logAt) logAt[0] = gcLogSize!();
  let last = performance.now();
  let lastWait = runQueueWaitMs();
  let lastCpu = threadCpuMs();
  let turns = 0;
  let recorded = 0;
  let heldMs = 0;
  let wallMs = 0;
  let cpuMs = 0;
  let done = false;
  const tick = () => {
    const now = performance.now();
    const wait = runQueueWaitMs();
    const cpu = threadCpuMs();
    const turn = cpu - lastCpu;
    wallMs = Math.max(wallMs, now - last);
    cpuMs = Math.max(cpuMs, turn);
    if (turnCpu && logAt) {
      // A turn under STEP_MIN_MS without a log line changes no GC figure (see gcInTurns): not kept.
      const logSize = gcLogSize!();
      if ((turn >= STEP_MIN_MS || logSize !== logAt[recorded]) && recorded < RECORDED_TURNS) {
        turnCpu[recorded] = turn;
        logAt[++recorded] = logSize;
      }
    }
    lastCpu = cpu;
    const held = Math.max(0, now - last - (wait - lastWait));
    heldMs = Math.max(heldMs, held);
    heldCounts[Math.min(HELD_BUCKETS - 1, Math.floor(held / HELD_BUCKET_MS))]!++;
    turns++;
    last = now;
    lastWait = wait;
    if (!done) setImmediate(tick);
  };
  setImmediate(tick);
  const started = performance.now();
  const startedCpu = threadCpuMs();
  await task();
  const totalMs = performance.now() - started;
  const taskCpuMs = threadCpuMs() - startedCpu;
  done = true;
  await new Promise((resolve) => setImmediate(resolve));
  if (turnCpu && recorded === RECORDED_TURNS) console.error(`measureHolds: more than ${RECORDED_TURNS} turns with work; the GC figures cover the first ones`);
  const gc = gcLogFile && turnCpu && logAt ? gcInTurns(gcLogFile, turnCpu.subarray(0, recorded), logAt.subarray(0, recorded + 1), taskCpuMs) : undefined;
  return { wallMs, heldMs, p99Ms: percentileOf(heldCounts, turns, 0.99, heldMs), cpuMs, taskCpuMs, totalMs, gc };
}

/** The `share` percentile of `count` values counted in heldCounts' buckets; the longest is `max`. */
function percentileOf(counts: Uint32Array, count: number, share: number, max: number): number {
  const rank = Math.min(count - 1, Math.floor(share * count));
  let seen = 0;
  for (let bucket = 0; bucket < counts.length; bucket++) {
    seen += counts[bucket]!;
    if (seen > rank) return bucket === counts.length - 1 ? max : Math.min(max, (bucket + 1) * HELD_BUCKET_MS);
  }
  return max;
}

/**
 * JSC's GC log lines (BUN_JSC_logGC=1): the collection's kind as it starts, its pauses, its end.
 * Threads write them in pieces, so a Worker's may split the main thread's: pieces end in `ms]` or `...]`.
 */
const GC_LINE = /\[GC<|^Requesting GC|GC END!|ms\]$|\.\.\.\]$/;
const PAUSE = /(?:p=|starting |epilogue )([\d.]+)ms/g;

/** The collections in each turn, from the GC log between the sizes it had at the turns' ends. */
function gcInTurns(file: string, turnCpu: Float64Array, logAt: Float64Array, total: number): GcInTurns {
  const fd = openSync(file, 'r');
  const log = Buffer.alloc(logAt.at(-1)! - logAt[0]!);
  readSync(fd, log, 0, log.length, logAt[0]!);
  closeSync(fd);
  const text = (turn: number) => log.toString('latin1', logAt[turn]! - logAt[0]!, logAt[turn + 1]! - logAt[0]!);
  let eden = 0;
  let full = 0;
  let pausedMs = 0;
  const own: number[] = [];
  const withGc: { cpu: number; paused: number }[] = [];
  // A collection marks concurrently between its pauses, across turns: a turn that starts inside one
  // is counted with it even when it wrote no line.
  let collecting = false;
  turnCpu.forEach((cpu, turn) => {
    const lines = logAt[turn + 1] === logAt[turn] ? '' : text(turn).split('\n').filter((line) => line.startsWith(ownHeap)).join('\n');
    const during = collecting;
    if (lines !== '') collecting = lines.lastIndexOf(': START') > lines.lastIndexOf('END]');
    if (lines === '' && !during) return void own.push(cpu);
    eden += lines.match(/=> EdenCollection/g)?.length ?? 0;
    full += lines.match(/=> FullCollection/g)?.length ?? 0;
    let paused = 0;
    for (const [, ms] of lines.matchAll(PAUSE)) paused += Number(ms);
    pausedMs += paused;
    withGc.push({ cpu, paused });
  });
  // The typical step: turns that ran one (not only the ticker's own turns, e.g. during a write pause).
  const steps = own.filter((cpu) => cpu >= STEP_MIN_MS).sort((a, b) => a - b);
  const median = steps[steps.length >> 1] ?? 0;
  own.sort((a, b) => a - b);
  const worstGc = withGc.reduce((a, b) => (b.cpu > a.cpu ? b : a), { cpu: 0, paused: 0 });
  const extra = withGc.reduce((sum, { cpu }) => sum + Math.max(0, cpu - median), 0);
  return {
    eden,
    full,
    pausedMs,
    ownCpuMs: own.at(-1) ?? 0,
    medianOwnCpuMs: median,
    gcTurnCpuMs: worstGc.cpu,
    gcTurnPausedMs: worstGc.paused,
    turnsOverGoal: turnCpu.filter((cpu) => cpu > GC_GOAL_MS).length,
    turnsOverGoalWithGc: withGc.filter(({ cpu }) => cpu > GC_GOAL_MS).length,
    share: total > 0 ? extra / total : 0,
  };
}

/**
 * Runs this bench again with JSC's GC log on and its stderr in a file, so measureHolds can tell
 * each turn's collections (see GcInTurns); passes on the run's own stderr lines and exit code. In
 * the traced run (or with BUN_JSC_logGC set by hand) it returns at once.
 */
export function withGcLog(): void {
  if (process.env.BUN_JSC_logGC) return;
  const file = path.join(tmpdir(), `svc-bench-gc-${process.pid}.log`);
  const run = Bun.spawnSync([process.execPath, ...process.argv.slice(1)], {
    env: { ...process.env, BUN_JSC_logGC: '1', [GC_LOG_ENV]: file },
    stdin: 'inherit',
    stdout: 'inherit',
    stderr: Bun.file(file),
  });
  const own = readFileSync(file, 'latin1').split('\n').filter((line) => line !== '' && !GC_LINE.test(line));
  if (own.length > 0) console.error(own.join('\n'));
  rmSync(file, { force: true });
  process.exit(run.exitCode ?? 1);
}

const ms = (value: number) => `${value.toFixed(1).padStart(7)} ms`;
export const holdsRow = (name: string, h: Holds) =>
  `${name.padEnd(40)} held: longest ${ms(h.heldMs)}  p99 ${ms(h.p99Ms)}   on CPU: longest ${ms(h.cpuMs)}   longest gap (wall) ${ms(h.wallMs)}   total ${h.totalMs.toFixed(0).padStart(7)} ms (${h.taskCpuMs.toFixed(0)} ms on CPU)` +
  (h.gc ? `\n${''.padEnd(40)} ${gcRow(h.gc)}` : '');

const gcRow = (gc: GcInTurns) =>
  `GC: longest turn without one on CPU ${ms(gc.ownCpuMs)} (median step ${gc.medianOwnCpuMs.toFixed(2)} ms), with one ${ms(gc.gcTurnCpuMs)} (paused ${gc.gcTurnPausedMs.toFixed(1)} ms in it); ` +
  `turns over ${GC_GOAL_MS} ms on CPU: ${gc.turnsOverGoal}, ${gc.turnsOverGoalWithGc} with a GC; GC share of CPU ${(gc.share * 100).toFixed(1)}%; ${gc.eden} eden + ${gc.full} full collections, paused ${gc.pausedMs.toFixed(0)} ms`;
