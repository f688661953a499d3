// The floor for the signals benchmark: a bare Bun.serve answering every GET with the bytes svc answers.
// Usage: baseline.ts BODY_FILE HEADERS_JSON [STATUS]
// HEADERS_JSON is the response headers svc sent for the request (without Date and Content-Length,
// which Bun adds to both). An `x-request-id` among them is made per request the way svc makes its
// own (a boot id and a counter), so each answer has the same bytes in the same shape. Headers
// without it (e.g. `{"content-type": ...}` alone) give the body-only baseline.
import { randomBytes } from 'node:crypto';

const [file, headersJson = '{}', status = '200'] = Bun.argv.slice(2);
const body = await Bun.file(file!).bytes();
const sent: Record<string, string> = JSON.parse(headersJson);
const perRequestId = 'x-request-id' in sent;
delete sent['x-request-id'];
// Prebuilt once and only the id set per request: the cheapest way Bun has to send a header set.
const headers = new Headers(sent);
const init = { status: Number(status), headers };
const bootId = randomBytes(6).toString('base64url');
let sequence = 0;
const server = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  fetch: perRequestId
    ? () => {
        headers.set('x-request-id', `${bootId}-${(++sequence).toString(36)}`);
        return new Response(body, init);
      }
    : () => new Response(body, init),
});
console.log(JSON.stringify({ url: `http://127.0.0.1:${server.port}` }));
export {};
