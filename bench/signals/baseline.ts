// The floor for the signals benchmark: a bare Bun.serve answering every GET with the same bytes svc
// renders (the file named on the command line), so the comparison is about the work, not the size.
const body = await Bun.file(Bun.argv[2]!).bytes();
const server = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  fetch: () => new Response(body, { headers: { 'Content-Type': 'application/ld+json' } }),
});
console.log(JSON.stringify({ url: `http://127.0.0.1:${server.port}` }));
export {};
