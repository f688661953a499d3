/**
 * A throwaway redis-server (from the system's packages: apt-get install redis-server) on a free
 * loopback port in a temporary directory, with no persistence, for the tests of shared rate limits
 * and for bench/scale.ts; `remove()` stops it and removes its directory.
 */
import { RedisClient } from 'bun';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from './postgres-throwaway.ts';

export const REDIS_SERVER = Bun.which('redis-server');

export interface ThrowawayRedis {
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
  /** The same without waiting for the exit: for a process's exit handler. */
  removeNow(): void;
}

export async function startThrowawayRedis(options: { password?: string } = {}): Promise<ThrowawayRedis> {
  if (!REDIS_SERVER) throw new Error('redis-server is not installed (apt-get install -y redis-server)');
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-redis-'));
  const port = freePort();
  const auth = options.password === undefined ? '' : `:${encodeURIComponent(options.password)}@`;
  const url = `redis://${auth}127.0.0.1:${port}/0`;
  let proc: Bun.Subprocess | null = null;

  async function start(): Promise<void> {
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--daemonize', 'no'];
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
      rmSync(dir, { recursive: true, force: true });
    },
    removeNow: () => {
      proc?.kill('SIGTERM');
      proc = null;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

