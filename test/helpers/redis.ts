// A real redis-server (from the system's packages: apt-get install redis-server) for the tests of
// shared rate limits, started by the test on a free loopback port in a temp directory, with no
// persistence, and stopped by it. Without the binary those tests are skipped, saying why; CI
// installs it (.ci/run).
import { describe } from 'bun:test';
import { REDIS_SERVER } from '../../scripts/redis-throwaway.ts';

export { REDIS_SERVER, startThrowawayRedis as startRedis, type ThrowawayRedis as TestRedis } from '../../scripts/redis-throwaway.ts';

/** `describe` for tests that need redis-server: skipped, with the reason in its name, when it is not installed. */
export const describeRedis = (name: string, body: () => void) =>
  REDIS_SERVER ? describe(name, body) : describe.skip(`${name} [skipped: redis-server is not installed; apt-get install -y redis-server]`, body);

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
