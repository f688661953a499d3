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

/** Spawn a process that prints one JSON line with its `url` on stdout. */
export async function spawnServer(args: string[], env: Record<string, string> = {}): Promise<string> {
  const child = Bun.spawn([process.execPath, ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdout: 'pipe', stderr: 'ignore' });
  children.push(child);
  const reader = child.stdout.getReader();
  let text = '';
  while (!text.includes('\n')) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`${args.join(' ')} exited before listening`);
    text += new TextDecoder().decode(value);
  }
  return JSON.parse(text.split('\n')[0]!).url;
}

export interface WrkResult {
  rps: number;
  p50: string;
  p99: string;
  errors: number;
}

/** wrk -t2 -c64 with latency percentiles; `flags` go before the URL (-H, -s), `scriptArgs` to the Lua script. */
export async function wrk(url: string, seconds: number, flags: string[] = [], scriptArgs: string[] = []): Promise<WrkResult> {
  const args = ['wrk', '-t2', '-c64', `-d${seconds}s`, '--latency', ...flags, url, ...(scriptArgs.length ? ['--', ...scriptArgs] : [])];
  const proc = Bun.spawn(args, { stdout: 'pipe', stderr: 'pipe' });
  const out = await new Response(proc.stdout).text();
  await proc.exited;
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN);
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
  const socket = /Socket errors: (.*)/.exec(out)?.[1];
  if (!Number.isFinite(rps)) throw new Error(`could not read wrk output:\n${out}`);
  const percentile = (p: string) => new RegExp(`Latency Distribution[\\s\\S]*?${p}%\\s+(\\S+)`).exec(out)?.[1] ?? '?';
  return { rps, p50: percentile('50'), p99: percentile('99'), errors: non2xx + (socket ? 1 : 0) };
}

export const resultRow = (name: string, r: WrkResult) =>
  `${name.padEnd(34)} ${r.rps.toFixed(0).padStart(8)} req/s   p50 ${r.p50.padStart(8)}   p99 ${r.p99.padStart(8)}   non-2xx/errors ${r.errors}`;
