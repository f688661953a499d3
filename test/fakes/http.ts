/** The address and port each request to a fake came from (which process sent it: test/helpers/cluster.ts). */
const peers = new WeakMap<Request, { address: string; port: number }>();
export const peerOf = (request: Request) => peers.get(request) ?? null;

/** A local HTTP server on a free port standing in for a platform's API. */
export function startFake(fetch: (request: Request, url: URL) => Response | Promise<Response>) {
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: (request, self) => {
      const peer = self.requestIP(request);
      if (peer) peers.set(request, peer);
      return fetch(request, new URL(request.url));
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, stop: () => server.stop(true) };
}

export const json = (status: number, body: unknown) => Response.json(body, { status });

/** A failure mode a test can switch on: answer `status` to API calls (null = behave). */
export interface Outage {
  status: number | null;
}

/**
 * POST a delivery the way the platform would, after applying a test's header overrides (a value of
 * null removes that header: how the tamper suites drop a signature or a source).
 */
export function postDelivery(url: string, headers: Record<string, string>, overrides: Record<string, string | null> | undefined, body: string) {
  for (const [name, value] of Object.entries(overrides ?? {})) {
    if (value === null) delete headers[name];
    else headers[name] = value;
  }
  return fetch(url, { method: 'POST', headers, body });
}
