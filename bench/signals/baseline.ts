// The floor for the signals benchmark: a bare Bun.serve answering every GET with the same bytes svc
// answers (the file named on the command line, with its Content-Type and Content-Encoding), so the
// comparison is about the work, not the size.
const [file, type = 'application/octet-stream', encoding = ''] = Bun.argv.slice(2);
const body = await Bun.file(file!).bytes();
const headers: Record<string, string> = { 'Content-Type': type };
if (encoding) headers['Content-Encoding'] = encoding;
const server = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  fetch: () => new Response(body, { headers }),
});
console.log(JSON.stringify({ url: `http://127.0.0.1:${server.port}` }));
export {};
