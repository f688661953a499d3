import { afterEach, beforeEach } from 'bun:test';
import path from 'node:path';
import { tempDir } from './app.ts';
import { MAIN, REPO_ROOT } from './cli.ts';
import { engineEnv } from './engine.ts';

export interface SpawnedServer {
  url: string;
  /** The base URL the server uses in links and hook registration. */
  baseUrl: string;
  /** The whole "listening" line. */
  started: Record<string, unknown>;
  proc: Bun.Subprocess<'ignore', 'pipe', 'pipe'>;
  /** Everything the server wrote to stderr so far. */
  stderr(): string;
  /** SIGTERM (or `signal`) and wait for the exit code and the end of its stderr. */
  stop(signal?: NodeJS.Signals): Promise<number>;
}

/**
 * One JSON call to a running svc with `Authorization: Bearer <key>`: the parsed answer (null for
 * 204); any other status than 2xx throws with the answer's text.
 */
export async function callAs(serverUrl: string, key: string, method: string, route: string, body?: unknown): Promise<any> {
  const res = await fetch(`${serverUrl}${route}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${await res.text()}`);
  return res.status === 204 ? null : res.json();
}

/**
 * Waits until the store's catalogue sync on a spawned server is idle (its job runner works in the
 * background, so this polls). On a slow machine the first import can take seconds; after
 * `timeoutMs` it fails with the sync state the API last showed, so a failure says why.
 */
export async function untilStoreSynced(serverUrl: string, key: string, storeId: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { sync } = await callAs(serverUrl, key, 'GET', `/api/v1/admin/stores/${storeId}`);
    if (sync.state === 'idle') return;
    if (Date.now() > deadline) throw new Error(`store ${storeId} not synced after ${timeoutMs} ms: ${JSON.stringify(sync)}`);
    await Bun.sleep(50);
  }
}

/**
 * Start `svc serve` as its own process on a free port and wait for its "listening" line.
 * `command` defaults to `bun src/main.ts`; pass the compiled binary to smoke-test it. Under
 * `npm run test:postgres` it runs on the data directory's PostgreSQL database unless `engine` is `sqlite`.
 */
export async function spawnServer(options: { dataDir: string; env?: Record<string, string>; command?: string[]; cwd?: string; engine?: 'sqlite' }): Promise<SpawnedServer> {
  const command = options.command ?? [process.execPath, MAIN];
  const proc = Bun.spawn([...command, 'serve', '--http', '127.0.0.1:0', '--data-dir', options.dataDir], {
    cwd: options.cwd ?? REPO_ROOT,
    // The fake platforms listen on loopback: private targets are allowed unless a test says otherwise.
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', SVC_ALLOW_PRIVATE_TARGETS: '1', ...(options.engine === 'sqlite' ? {} : await engineEnv(options.dataDir, options.env)), ...options.env },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  });
  let errText = '';
  const stderrDrained = (async () => {
    for await (const chunk of proc.stderr) {
      const text = new TextDecoder().decode(chunk);
      errText += text;
      // Also to this process's stderr, which the test run captures: a failing test shows the server's log.
      process.stderr.write(text);
    }
  })();

  const reader = proc.stdout.getReader();
  let out = '';
  const deadline = Date.now() + 15_000;
  while (!out.includes('\n')) {
    if (Date.now() > deadline) throw new Error(`server did not start: ${errText}`);
    const { done, value } = await reader.read();
    if (done) throw new Error(`server exited before listening (code ${await proc.exited}): ${errText}`);
    out += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  const started = JSON.parse(out.slice(0, out.indexOf('\n'))) as { url: string; baseUrl: string };
  return {
    url: started.url,
    baseUrl: started.baseUrl,
    started,
    proc,
    stderr: () => errText,
    stop: async (signal = 'SIGTERM') => {
      proc.kill(signal);
      const code = await proc.exited;
      await stderrDrained; // everything it wrote is in stderr() once stop resolves
      return code;
    },
  };
}

/**
 * For spawned-server test files: a fresh temp directory per test (`dir`, with `dataDir` inside it)
 * and `start()`, whose servers are killed after each test, before the directory is removed.
 */
export function serversPerTest(prefix: string) {
  let tmp: ReturnType<typeof tempDir> | null = null;
  const running: SpawnedServer[] = [];
  beforeEach(() => {
    tmp = tempDir(prefix);
  });
  afterEach(async () => {
    for (const server of running.splice(0)) await server.stop('SIGKILL');
    tmp?.remove();
  });
  const context = {
    get dir(): string {
      return tmp!.dir;
    },
    get dataDir(): string {
      return path.join(tmp!.dir, 'data');
    },
    async start(options: { dataDir?: string; env?: Record<string, string> } = {}): Promise<SpawnedServer> {
      const server = await spawnServer({ dataDir: options.dataDir ?? context.dataDir, env: options.env });
      running.push(server);
      return server;
    },
  };
  return context;
}
