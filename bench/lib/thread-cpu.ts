// CPU time a process spends, per thread, from Linux's /proc. On a shared machine requests/s swing with
// other load, while the CPU a server's main (JS) thread spends per request barely moves: the servers
// benched here are bound by that one thread, so its baseline/svc ratio is the figure least moved by other load.
// Where /proc is absent (not Linux) every reading is null and the benches print "n/a". The kernel counts
// CPU time in 10 ms ticks, so a figure is only as fine as the run is long.
import { readFileSync, readdirSync } from 'node:fs';

/** Clock ticks per second of utime/stime in /proc (USER_HZ, 100 on every Linux build we run on). */
const USER_HZ = 100;

/** CPU seconds (user + system) in a /proc stat file: utime and stime, fields 14 and 15 (proc(5)), after the `(comm)` field. */
function statSeconds(file: string): number {
  const text = readFileSync(file, 'utf8');
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / USER_HZ;
}

interface CpuReading {
  /** The whole process, threads that already ended included. */
  process: number;
  /** Each live thread: its name (comm) and CPU seconds, by thread id. */
  threads: Map<string, { name: string; seconds: number }>;
}

function read(pid: number): CpuReading | null {
  try {
    const threads = new Map<string, { name: string; seconds: number }>();
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        threads.set(tid, { name: readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim(), seconds: statSeconds(`/proc/${pid}/task/${tid}/stat`) });
      } catch {
        // The thread ended between the listing and the read.
      }
    }
    return { process: statSeconds(`/proc/${pid}/stat`), threads };
  } catch {
    return null;
  }
}

/** CPU seconds a process spent over a span. */
export interface CpuUse {
  /** The main (JS) thread: the thread whose id is the pid. */
  main: number;
  /** All threads, those that ended during the span included. */
  all: number;
  /** The other threads, summed by name (comm), busiest first. */
  others: { name: string; seconds: number }[];
}

/** Start measuring the CPU of process `pid`; `stop()` gives what it spent since, or null without /proc. */
export function measureCpu(pid: number): { stop(): CpuUse | null } {
  const before = read(pid);
  return {
    stop() {
      const after = read(pid);
      if (!before || !after) return null;
      const spent = (tid: string) => (after.threads.get(tid)?.seconds ?? 0) - (before.threads.get(tid)?.seconds ?? 0);
      const others = new Map<string, number>();
      for (const [tid, { name }] of after.threads) if (tid !== String(pid)) others.set(name, (others.get(name) ?? 0) + spent(tid));
      return {
        main: spent(String(pid)),
        all: after.process - before.process,
        others: [...others].map(([name, seconds]) => ({ name, seconds })).sort((a, b) => b.seconds - a.seconds),
      };
    },
  };
}

/** One side of a CPU comparison: what it spent over `count` units of work (requests, scans). */
export interface CpuSide {
  label: string;
  use: CpuUse | null;
  count: number;
  /** Printed after its figures, e.g. what else the process did meanwhile. */
  note?: string;
}

const micros = (seconds: number, count: number) => `${((seconds / count) * 1e6).toFixed(1)} µs`;

/** "main thread 84.4 µs, all threads 98.0 µs (other threads, busiest: JITWorker 5.1 µs, …)" per unit, or "n/a". */
function perUnit({ use, count, note }: CpuSide): string {
  if (!use) return 'n/a (no /proc)';
  const busiest = use.others.filter((t) => (t.seconds / count) * 1e6 >= 0.05).slice(0, 3);
  const others = busiest.length ? `; other threads, busiest: ${busiest.map((t) => `${t.name} ${micros(t.seconds, count)}`).join(', ')}` : '';
  return `main thread ${micros(use.main, count)}, all threads ${micros(use.all, count)}${note ? ` (${note})` : ''}${others}`;
}

/**
 * Lines to print beside a throughput ratio: the CPU per `unit` of the baseline and of each svc side,
 * and the baseline/svc ratio of the main-thread figures (it compares with the throughput ratio svc/baseline).
 */
export function cpuReport(unit: string, baseline: CpuSide, ...svc: CpuSide[]): string[] {
  const width = Math.max(...[baseline, ...svc].map((side) => side.label.length));
  const perMain = (side: CpuSide) => (side.use ? side.use.main / side.count : NaN);
  return [
    ...[baseline, ...svc].map((side) => `CPU per ${unit}, ${side.label.padEnd(width)}: ${perUnit(side)}`),
    ...svc.map((side) => {
      const ratio = perMain(baseline) / perMain(side);
      return `main-thread CPU ratio ${baseline.label}/${side.label}: ${Number.isFinite(ratio) ? ratio.toFixed(2) : 'n/a'} (the figure least moved by other load on the machine)`;
    }),
  ];
}

/** CPU seconds of every process named `name` (comm), by pid; processes already gone are not counted. */
function readByName(name: string): Map<string, number> {
  const byPid = new Map<string, number>();
  let pids: string[] = [];
  try {
    pids = readdirSync('/proc').filter((entry) => /^\d+$/.test(entry));
  } catch {
    return byPid;
  }
  for (const pid of pids) {
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === name) byPid.set(pid, statSeconds(`/proc/${pid}/stat`));
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return byPid;
}

/**
 * Start measuring the CPU of every process named `name` (a database server's backends, say);
 * `stop()` gives the seconds they spent since (processes that ended meanwhile are missed).
 */
export function measureCpuByName(name: string): { stop(): number } {
  const before = readByName(name);
  return {
    stop() {
      let seconds = 0;
      for (const [pid, now] of readByName(name)) seconds += now - (before.get(pid) ?? 0);
      return seconds;
    },
  };
}
