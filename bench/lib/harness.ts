// Shared by the bench/ scripts: spawn servers that print their URL, run wrk, format a result row.
import { rmSync } from 'node:fs';
import path from 'node:path';

export const ROOT = path.resolve(import.meta.dir, '../..');

export function requireWrk(): void {
  if (!Bun.which('wrk')) {
    console.error('wrk not found: apt-get install -y wrk');
    process.exit(2);
  }
}

const children: Bun.Subprocess[] = [];

/** Kill every spawned server and remove `work` when the bench exits. */
export function cleanupOnExit(work: string): void {
  process.on('exit', () => {
    for (const child of children) child.kill();
    rmSync(work, { recursive: true, force: true });
  });
}

/** Spawn a process that prints one JSON line with its `url` on stdout; killed on exit unless stopped first. */
export async function spawnServer(args: string[], env: Record<string, string> = {}): Promise<{ url: string; proc: Bun.Subprocess<'ignore', 'pipe', 'ignore'> }> {
  const proc = Bun.spawn([process.execPath, ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdin: 'ignore', stdout: 'pipe', stderr: 'ignore' });
  children.push(proc);
  const reader = proc.stdout.getReader();
  let text = '';
  while (!text.includes('\n')) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`${args.join(' ')} exited before listening`);
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return { url: JSON.parse(text.split('\n')[0]!).url, proc };
}

export interface WrkResult {
  rps: number;
  /** Latency percentiles in milliseconds. */
  p50: number;
  p99: number;
  requests: number;
  /** Non-2xx/3xx responses plus 1 when wrk reported socket errors. */
  errors: number;
}

export interface WrkOptions {
  /** Go before the URL (-H, -s). */
  flags?: string[];
  /** Passed to the Lua script. */
  scriptArgs?: string[];
  threads?: number;
  connections?: number;
}

const MS_PER_UNIT: Record<string, number> = { us: 0.001, ms: 1, s: 1000 };

/** wrk with latency percentiles (default -t2 -c64, the settings every benchmark here reports). */
export async function wrk(url: string, seconds: number, options: WrkOptions = {}): Promise<WrkResult> {
  const { flags = [], scriptArgs = [], threads = 2, connections = 64 } = options;
  const args = ['wrk', `-t${threads}`, `-c${connections}`, `-d${seconds}s`, '--latency', ...flags, url, ...(scriptArgs.length ? ['--', ...scriptArgs] : [])];
  const proc = Bun.spawn(args, { stdout: 'pipe', stderr: 'pipe' });
  const out = await new Response(proc.stdout).text();
  await proc.exited;
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN);
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
  const socket = /Socket errors: (.*)/.exec(out)?.[1];
  if (!Number.isFinite(rps)) throw new Error(`could not read wrk output:\n${out}`);
  const percentile = (p: string) => {
    const m = new RegExp(`Latency Distribution[\\s\\S]*?${p}%\\s+([\\d.]+)(us|ms|s)`).exec(out);
    return m ? Number(m[1]) * MS_PER_UNIT[m[2]!]! : NaN;
  };
  return {
    rps,
    p50: percentile('50'),
    p99: percentile('99'),
    requests: Number(/(\d+) requests in/.exec(out)?.[1] ?? NaN),
    errors: non2xx + (socket ? 1 : 0),
  };
}

/** Whole-second slices adding up to `seconds`, about `sliceSeconds` each (wrk's -d takes whole seconds). */
export function slicesOf(seconds: number, sliceSeconds: number): number[] {
  const count = Math.max(1, Math.round(seconds / sliceSeconds));
  return Array.from({ length: count }, (_, i) => Math.floor(seconds / count) + (i < seconds % count ? 1 : 0));
}

export interface AlternatingResult {
  /** The slices together: requests/s over their summed time, requests and errors summed, p50 the median of the slices', p99 the highest. */
  total: WrkResult;
  /** One per round, in order. */
  slices: WrkResult[];
}

/**
 * wrk against each target in turn, `seconds` in all for each, in rounds of one slice per target
 * (slicesOf): each round starts one target later than the round before, so load that drifts
 * during the run weighs on every target alike instead of on whichever ran last.
 */
export async function wrkAlternating<Name extends string>(targets: Record<Name, { url: string; options?: WrkOptions }>, seconds: number, sliceSeconds: number): Promise<Record<Name, AlternatingResult>> {
  const names = Object.keys(targets) as Name[];
  const slices = new Map(names.map((name) => [name, [] as WrkResult[]]));
  for (const [round, length] of slicesOf(seconds, sliceSeconds).entries()) {
    for (let i = 0; i < names.length; i++) {
      const name = names[(round + i) % names.length]!;
      slices.get(name)!.push(await wrk(targets[name].url, length, targets[name].options));
    }
  }
  const summed = (runs: WrkResult[]): WrkResult => {
    const requests = runs.reduce((sum, r) => sum + r.requests, 0);
    const p50s = runs.map((r) => r.p50).sort((a, b) => a - b);
    return {
      rps: requests / runs.reduce((sum, r) => sum + r.requests / r.rps, 0),
      p50: p50s[Math.floor(p50s.length / 2)]!,
      p99: Math.max(...runs.map((r) => r.p99)),
      requests,
      errors: runs.reduce((sum, r) => sum + r.errors, 0),
    };
  };
  return Object.fromEntries(names.map((name) => [name, { total: summed(slices.get(name)!), slices: slices.get(name)! }])) as Record<Name, AlternatingResult>;
}

export const resultRow = (name: string, r: WrkResult) =>
  `${name.padEnd(34)} ${r.rps.toFixed(0).padStart(8)} req/s   p50 ${r.p50.toFixed(2).padStart(7)}ms   p99 ${r.p99.toFixed(2).padStart(7)}ms   non-2xx/errors ${r.errors}`;
