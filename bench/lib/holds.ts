// How long background work holds the event loop: a setImmediate ticker runs beside the task and the
// gaps between its ticks are the holds. On a shared machine a gap also contains time the thread sat
// runnable while other processes had the CPU; Linux reports that wait per thread
// (/proc/thread-self/schedstat, field 2), so `held` subtracts it: what the task itself held,
// on the CPU or blocked in a system call (an fsync), whatever the machine's load.
import { readFileSync } from 'node:fs';

export interface Holds {
  /** Longest gap between ticks (wall clock), ms. */
  wallMs: number;
  /** Longest gap minus the time the thread waited for a CPU during it, ms. */
  heldMs: number;
  /** 99th percentile of the held gaps, ms. */
  p99Ms: number;
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

/** The holds of the event loop while `task` runs. */
export async function measureHolds(task: () => Promise<unknown>): Promise<Holds> {
  let last = performance.now();
  let lastWait = runQueueWaitMs();
  const held: number[] = [];
  let wallMs = 0;
  let done = false;
  const tick = () => {
    const now = performance.now();
    const wait = runQueueWaitMs();
    wallMs = Math.max(wallMs, now - last);
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
  return { wallMs, heldMs: held.at(-1)!, p99Ms: held[Math.min(held.length - 1, Math.floor(0.99 * held.length))]!, totalMs };
}

const ms = (value: number) => `${value.toFixed(1).padStart(7)} ms`;
export const holdsRow = (name: string, h: Holds) =>
  `${name.padEnd(40)} held: longest ${ms(h.heldMs)}  p99 ${ms(h.p99Ms)}   longest gap (wall) ${ms(h.wallMs)}   total ${h.totalMs.toFixed(0).padStart(7)} ms`;
