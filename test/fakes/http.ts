/** A local HTTP server on a free port standing in for a platform's API. */
export function startFake(fetch: (request: Request, url: URL) => Response | Promise<Response>) {
  const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: (request) => fetch(request, new URL(request.url)) });
  return { url: `http://127.0.0.1:${server.port}`, stop: () => server.stop(true) };
}

export const json = (status: number, body: unknown) => Response.json(body, { status });

/** A failure mode a test can switch on: answer `status` to API calls (null = behave). */
export interface Outage {
  status: number | null;
}
