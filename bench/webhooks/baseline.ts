export {};
// The floor for the webhook benchmark: a bare Bun.serve that reads the body and answers 200 JSON.
const server = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  async fetch(request) {
    await request.arrayBuffer();
    return Response.json({ received: true });
  },
});
console.log(JSON.stringify({ url: `http://127.0.0.1:${server.port}` }));

export {};
