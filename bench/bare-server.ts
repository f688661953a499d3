// Baseline for bench/ingest.ts: the least a JSON ingestion endpoint can do on Bun — read and parse
// the body, check one field, answer 204. No framework, no auth, no database.
const server = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  async fetch(request) {
    const body = (await request.json()) as { hostname?: unknown };
    return new Response(null, { status: typeof body.hostname === 'string' ? 204 : 400 });
  },
});
console.log(JSON.stringify({ status: 'listening', url: `http://127.0.0.1:${server.port}` }));

export {};
