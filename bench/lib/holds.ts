// How long background work holds the event loop: a setImmediate ticker runs beside the task and the
// gaps between its ticks are the holds. On a shared machine a gap also contains time the thread sat
// runnable while other processes had the CPU; Linux reports that wait per thread
// (/proc/thread-self/schedstat, field 2), so `held` subtracts it: what the task itself held,
// on the CPU or blocked in a system call (an fsync), whatever the machine's load. On a busy machine
// `held` still grows with what others do (the thread also sleeps while the GC's helper threads wait
// for a CPU, or while a write waits for a disk other processes keep busy), so `cpu` reports the
// thread's own CPU time between two ticks (CLOCK_THREAD_CPUTIME_ID): the work itself, which load
// does not change.
import { dlopen, FFIType, ptr } from 'bun:ffi';
import { readFileSync } from 'node:fs';

export interface Holds {
  /** Longest gap between ticks (wall clock), ms. */
  wallMs: number;
  /** Longest gap minus the time the thread waited for a CPU during it, ms. */
  heldMs: number;
  /** 99th percentile of the held gaps, ms. */
  p99Ms: number;
  /** Most CPU time the thread used between two ticks, ms (NaN where the clock cannot be read). */
  cpuMs: number;
  totalMs: number;
}

const SCHEDSTAT = '/proc/thread-self/schedstat';
/** Nanoseconds this thread has waited runnable for a CPU (0 where Linux does not say). */
function runQueueWaitMs(): number {
  try {
    return Number(readFileSync(SCHEDSTAT, 'utf8').split(' ')[1]) / 1e6;
  } catch {
    return 0;
  }
}

const CLOCK_THREAD_CPUTIME_ID = 3;
/** Milliseconds of CPU this thread has used (Linux's per-thread clock through libc; NaN elsewhere). */
export const threadCpuMs: () => number = (() => {
  try {
    const libc = dlopen('libc.so.6', { clock_gettime: { args: [FFIType.i32, FFIType.ptr], returns: FFIType.i32 } });
    const timespec = new BigInt64Array(2);
    const at = ptr(timespec);
    return () => (libc.symbols.clock_gettime(CLOCK_THREAD_CPUTIME_ID, at) === 0 ? Number(timespec[0]) * 1000 + Number(timespec[1]) / 1e6 : NaN);
  } catch {
    return () => NaN;
  }
})();

/** The holds of the event loop while `task` runs. */
export async function measureHolds(task: () => Promise<unknown>): Promise<Holds> {
  let last = performance.now();
  let lastWait = runQueueWaitMs();
  let lastCpu = threadCpuMs();
  const held: number[] = [];
  let wallMs = 0;
  let cpuMs = 0;
  let done = false;
  const tick = () => {
    const now = performance.now();
    const wait = runQueueWaitMs();
    const cpu = threadCpuMs();
    wallMs = Math.max(wallMs, now - last);
    cpuMs = Math.max(cpuMs, cpu - lastCpu);
    lastCpu = cpu;
    held.push(Math.max(0, now - last - (wait - lastWait)));
    last = now;
    lastWait = wait;
    if (!done) setImmediate(tick);
  };
  setImmediate(tick);
  const started = performance.now();
  await task();
  const totalMs = performance.now() - started;
  done = true;
  await new Promise((resolve) => setImmediate(resolve));
  held.sort((a, b) => a - b);
  return { wallMs, heldMs: held.at(-1)!, p99Ms: held[Math.min(held.length - 1, Math.floor(0.99 * held.length))]!, cpuMs, totalMs };
}

const ms = (value: number) => `${value.toFixed(1).padStart(7)} ms`;
export const holdsRow = (name: string, h: Holds) =>
  `${name.padEnd(40)} held: longest ${ms(h.heldMs)}  p99 ${ms(h.p99Ms)}   on CPU: longest ${ms(h.cpuMs)}   longest gap (wall) ${ms(h.wallMs)}   total ${h.totalMs.toFixed(0).padStart(7)} ms`;
