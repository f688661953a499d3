import path from 'node:path';
import { engineEnv } from './engine.ts';

export const REPO_ROOT = path.resolve(import.meta.dir, '../..');
export const MAIN = path.join(REPO_ROOT, 'src/main.ts');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  json: any;
}

/**
 * Run `svc <args>` as a separate process (`bun src/main.ts`, or `command`, e.g. the compiled binary),
 * like an operator would; `stdin` is piped in when given. With `timeoutMs` the process is killed if
 * it is still running then (for commands that must refuse to start, such as a second `serve`: a
 * regression then fails the test instead of hanging it). Under npm run test:postgres a command gets the
 * PostgreSQL database of the data directory it names (test/helpers/engine.ts), unless `engine` is `sqlite`.
 */
/** The data directory a command names (`--data-dir <dir>` or `--data-dir=<dir>`), resolved against its working directory. */
function dataDirOf(args: string[], cwd: string = REPO_ROOT): string | undefined {
  const at = args.indexOf('--data-dir');
  const value = at >= 0 ? args[at + 1] : args.find((arg) => arg.startsWith('--data-dir='))?.slice('--data-dir='.length);
  return value === undefined ? undefined : path.resolve(cwd, value);
}

export async function runCli(
  args: string[],
  options: { cwd?: string; env?: Record<string, string>; stdin?: string; timeoutMs?: number; command?: string[]; engine?: 'sqlite' } = {},
): Promise<CliResult> {
  const proc = Bun.spawn([...(options.command ?? [process.execPath, MAIN]), ...args], {
    cwd: options.cwd ?? REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...(options.engine === 'sqlite' ? {} : await engineEnv(dataDirOf(args, options.cwd), options.env)), ...options.env },
    stdin: options.stdin === undefined ? 'ignore' : new Blob([options.stdin]),
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const timer = options.timeoutMs ? setTimeout(() => proc.kill('SIGKILL'), options.timeoutMs) : null;
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (timer) clearTimeout(timer);
  let json: any = null;
  try {
    json = JSON.parse(stdout);
  } catch {
    json = null;
  }
  return { code, stdout, stderr, json };
}
