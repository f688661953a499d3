// A real redis-server (from the system's packages: apt-get install redis-server) for the tests of
// shared rate limits, started by the test on a free loopback port in a temp directory, with no
// persistence, and stopped by it. Without the binary those tests are skipped, saying why; CI
// installs it (.ci/run).
import { describe } from 'bun:test';
import { RedisClient } from 'bun';
import { tempDir } from './app.ts';

export const REDIS_SERVER = Bun.which('redis-server');

/** `describe` for tests that need redis-server: skipped, with the reason in its name, when it is not installed. */
export const describeRedis = (name: string, body: () => void) =>
  REDIS_SERVER ? describe(name, body) : describe.skip(`${name} [skipped: redis-server is not installed; apt-get install -y redis-server]`, body);

/** A free loopback port (taken by the OS, then released for the server about to bind it). */
function freePort(): number {
  const probe = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } });
  const port = probe.port;
  probe.stop(true);
  return port;
}

export interface TestRedis {
  port: number;
  /** `redis://[:password@]127.0.0.1:<port>/0`. */
  url: string;
  /** A new client for the test's own look at the keys (the test closes it). */
  client(): RedisClient;
  /** Stops the server (SIGTERM) and waits for it to exit: svc's connections close. */
  stop(): Promise<void>;
  /** Starts it again on the same port (empty: nothing is persisted). */
  start(): Promise<void>;
  /** Stops it and removes its directory. */
  remove(): Promise<void>;
}

export async function startRedis(options: { password?: string } = {}): Promise<TestRedis> {
  if (!REDIS_SERVER) throw new Error('redis-server is not installed (apt-get install -y redis-server)');
  const dir = tempDir('svc-redis-');
  const port = freePort();
  const auth = options.password === undefined ? '' : `:${encodeURIComponent(options.password)}@`;
  const url = `redis://${auth}127.0.0.1:${port}/0`;
  let proc: Bun.Subprocess | null = null;

  async function start(): Promise<void> {
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir.dir, '--daemonize', 'no'];
    if (options.password !== undefined) args.push('--requirepass', options.password);
    proc = Bun.spawn([REDIS_SERVER!, ...args], { stdout: 'pipe', stderr: 'pipe', stdin: 'ignore' });
    const deadline = Date.now() + 10_000;
    for (;;) {
      const client = new RedisClient(url, { autoReconnect: false, enableOfflineQueue: false, connectionTimeout: 500 });
      try {
        await client.connect();
        if ((await client.send('PING', [])) === 'PONG') return;
      } catch (error) {
        if (Date.now() > deadline) throw new Error(`redis-server did not answer on port ${port}: ${(error as Error).message}`);
      } finally {
        client.close();
      }
      await Bun.sleep(20);
    }
  }

  async function stop(): Promise<void> {
    const running = proc;
    proc = null;
    if (!running) return;
    running.kill('SIGTERM');
    await running.exited;
  }

  await start();
  return {
    port,
    url,
    client: () => new RedisClient(url, { autoReconnect: false }),
    stop,
    start,
    remove: async () => {
      await stop();
      dir.remove();
    },
  };
}

/**
 * A TCP proxy to `port` that can be made to hang: from `hang()` on it accepts connections and reads
 * what is sent but never answers (on connections old and new), as a Redis that stopped responding.
 */
export function hangingProxy(port: number) {
  let hanging = false;
  type Ends = { upstream: Bun.Socket<undefined> | null; early: Uint8Array[] };
  const server = Bun.listen<Ends>({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      open(client) {
        client.data = { upstream: null, early: [] };
        if (hanging) return;
        void Bun.connect({
          hostname: '127.0.0.1',
          port,
          socket: {
            open(upstream) {
              client.data.upstream = upstream;
              for (const chunk of client.data.early.splice(0)) upstream.write(chunk);
            },
            data(_upstream, chunk) {
              if (!hanging) client.write(chunk);
            },
            close() {
              client.end();
            },
          },
        });
      },
      data(client, chunk) {
        if (hanging) return;
        if (client.data.upstream) client.data.upstream.write(chunk);
        else client.data.early.push(new Uint8Array(chunk));
      },
      close(client) {
        client.data.upstream?.end();
      },
    },
  });
  return {
    port: server.port,
    hang: () => {
      hanging = true;
    },
    close: () => server.stop(true),
  };
}
