import { afterEach, describe, expect, test } from 'bun:test';
import { makeTestApp, type TestApp } from './helpers/app.ts';
import { readBodyLimited } from '../src/lib/body.ts';

let t: TestApp;
afterEach(() => t?.close());

const SIGN_UP = '/api/v1/public/leads';

/** A body stream that sends `chunks` (one per `everyMs`) and then, unless `end`, stalls; records whether it was cancelled. */
function trickle(chunks: string[], everyMs: number, end = false) {
  const state = { cancelled: false, sent: 0 };
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (state.sent > 0) await Bun.sleep(everyMs);
      if (state.cancelled) return;
      if (state.sent < chunks.length) controller.enqueue(new TextEncoder().encode(chunks[state.sent++]!));
      else if (end) controller.close();
      else await new Promise(() => {}); // stalls: never sends another byte
    },
    cancel() {
      state.cancelled = true;
    },
  });
  return { stream, state };
}

/** A sign-up whose body is `stream`, from `ip`, optionally declaring its length. */
async function appWith(env: Record<string, string>, peer: { ip: string }) {
  t = await makeTestApp({ env, peerAddress: () => peer.ip });
}
const upload = (stream: ReadableStream<Uint8Array>, declared?: number) =>
  t.request(SIGN_UP, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(declared === undefined ? {} : { 'content-length': String(declared) }) },
    body: stream,
    // @ts-expect-error: Bun and the fetch spec need half-duplex for a streamed request body
    duplex: 'half',
  });

describe('request bodies have deadlines (issue 11)', () => {
  test('a body that stops arriving gets 408 body_timeout after SVC_BODY_TIMEOUT_MS, and its stream is cancelled', async () => {
    await appWith({ SVC_BODY_TIMEOUT_MS: '500' }, { ip: '198.18.1.1' });
    const { stream, state } = trickle(['{"email":'], 10);
    const response = await upload(stream);
    expect(response.status).toBe(408);
    expect(await response.json()).toEqual({ error: 'body_timeout', detail: 'the request body did not arrive within 500 ms' });
    expect(response.headers.get('connection')).toBe('close');
    expect(state.cancelled).toBe(true);
  });

  test('a body trickling below SVC_BODY_MIN_BYTES_PER_SECOND after the grace period gets 408', async () => {
    await appWith({ SVC_BODY_GRACE_MS: '300', SVC_BODY_MIN_BYTES_PER_SECOND: '1000', SVC_BODY_TIMEOUT_MS: '30000' }, { ip: '198.18.1.2' });
    const { stream, state } = trickle(Array.from({ length: 100 }, () => ' '), 50); // 20 bytes a second
    const response = await upload(stream);
    expect(response.status).toBe(408);
    expect(await response.json()).toMatchObject({ error: 'body_timeout', detail: 'the request body arrived slower than 1000 bytes per second' });
    expect(state.cancelled).toBe(true);
    expect(state.sent).toBeLessThan(30);
  });

  // A declared body of at most SVC_BODY_MIN_BYTES_PER_SECOND x SVC_BODY_GRACE_MS / 1000 bytes is read whole, not chunk by chunk.
  test('a small declared body that stops arriving gets 408 body_timeout after SVC_BODY_TIMEOUT_MS', async () => {
    await appWith({ SVC_BODY_TIMEOUT_MS: '500', SVC_BODY_GRACE_MS: '30000' }, { ip: '198.18.1.4' });
    const response = await upload(trickle(['{"email":'], 10).stream, 40);
    expect(response.status).toBe(408);
    expect(await response.json()).toEqual({ error: 'body_timeout', detail: 'the request body did not arrive within 500 ms' });
    expect(response.headers.get('connection')).toBe('close');
  });

  test('a small declared body still arriving after the grace period gets 408, however much of it arrived', async () => {
    await appWith({ SVC_BODY_GRACE_MS: '300', SVC_BODY_MIN_BYTES_PER_SECOND: '1000', SVC_BODY_TIMEOUT_MS: '30000' }, { ip: '198.18.1.5' });
    // 299 of 300 declared bytes at once: the last one would have to arrive within the grace period.
    const response = await upload(trickle([' '.repeat(299), ' '], 2_000, true).stream, 300);
    expect(response.status).toBe(408);
    expect(await response.json()).toMatchObject({ error: 'body_timeout', detail: 'the request body arrived slower than 1000 bytes per second' });
  });

  test('a larger declared body arriving steadily above the minimum rate is accepted after the grace period', async () => {
    await appWith({ SVC_BODY_GRACE_MS: '300', SVC_BODY_MIN_BYTES_PER_SECOND: '1000', SVC_BODY_TIMEOUT_MS: '30000' }, { ip: '198.18.1.6' });
    const body = JSON.stringify({ email: 'steady@example.com' }).padEnd(1_000, ' '); // 2,000 bytes a second for half a second
    const response = await upload(trickle(body.match(/[^]{1,200}/g)!, 100, true).stream, body.length);
    expect(response.status).toBe(201);
  });

  test('a slow but steady body that meets the defaults is accepted (a slow mobile scanner)', async () => {
    await appWith({}, { ip: '198.18.1.3' });
    const body = JSON.stringify({ email: 'mobile@example.com' });
    const { stream } = trickle([body.slice(0, 5), body.slice(5, 15), body.slice(15)], 300, true);
    const response = await upload(stream);
    expect(response.status).toBe(201);
  });
});

describe('body bytes in flight are capped (issue 11)', () => {
  test('per client: a second upload that would pass SVC_BODY_BUFFER_PER_CLIENT_BYTES gets 429 with Retry-After; another client is served', async () => {
    const peer = { ip: '198.18.2.1' };
    await appWith({ SVC_BODY_BUFFER_PER_CLIENT_BYTES: '65536', SVC_BODY_TIMEOUT_MS: '800' }, peer);
    const first = upload(trickle(['{"email":'], 10).stream, 40_000);
    await Bun.sleep(50);
    const second = await upload(trickle(['{"email":'], 10).stream, 40_000);
    expect(second.status).toBe(429);
    expect(second.headers.get('retry-after')).toBe('1');
    expect(await second.json()).toMatchObject({ error: 'too_many_uploads' });
    peer.ip = '198.18.2.2';
    const body = JSON.stringify({ email: 'other@example.com' });
    expect((await upload(trickle([body], 10, true).stream, body.length)).status).toBe(201);
    expect((await first).status).toBe(408);
    // The stalled upload's bytes were released with it: the first client may upload again.
    peer.ip = '198.18.2.1';
    const again = JSON.stringify({ email: 'again@example.com' }).padEnd(40_000, ' ');
    expect((await upload(trickle([again], 10, true).stream, again.length)).status).toBe(201);
  });

  test('in total: an upload that would pass SVC_BODY_BUFFER_BYTES gets 503 server_busy with Retry-After', async () => {
    const peer = { ip: '198.18.3.1' };
    await appWith({ SVC_BODY_BUFFER_BYTES: '65536', SVC_BODY_TIMEOUT_MS: '800' }, peer);
    const first = upload(trickle(['{"email":'], 10).stream, 40_000);
    await Bun.sleep(50);
    peer.ip = '198.18.3.2';
    const second = await upload(trickle(['{"email":'], 10).stream, 40_000);
    expect(second.status).toBe(503);
    expect(second.headers.get('retry-after')).toBe('1');
    expect(await second.json()).toMatchObject({ error: 'server_busy' });
    expect((await first).status).toBe(408);
  });

  test('an undeclared (chunked) body is counted as it arrives', async () => {
    const peer = { ip: '198.18.4.1' };
    await appWith({ SVC_BODY_BUFFER_PER_CLIENT_BYTES: '65536', SVC_BODY_TIMEOUT_MS: '2000' }, peer);
    const first = upload(trickle(['{"email":"', 'x'.repeat(60_000)], 10).stream);
    await Bun.sleep(100);
    const second = await upload(trickle(['{"email":"', 'y'.repeat(10_000)], 10).stream);
    expect(second.status).toBe(429);
    expect((await first).status).toBe(408);
  });
});

describe('unauthenticated webhook routes (issue 11)', () => {
  /** A delivery whose body never finishes arriving: answered at once only if svc refuses it from the headers. */
  async function stalledDelivery(path: string, headers: Record<string, string>) {
    const { stream, state } = trickle(['{"id":'], 10);
    const response = t.request(path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': '100000', ...headers },
      body: stream,
      // @ts-expect-error: Bun and the fetch spec need half-duplex for a streamed request body
      duplex: 'half',
    });
    const answered = await Promise.race([response, Bun.sleep(1_000).then(() => null)]);
    return { answered, state };
  }
  const SIGNATURE = 'A'.repeat(43) + '=';

  test('a delivery for an unknown store is refused 401 from its headers, before its body is read', async () => {
    await appWith({}, { ip: '198.18.5.1' });
    const deliveries: [string, Record<string, string>][] = [
      ['/api/v1/webhooks/platform-a', { 'x-platform-a-hmac-sha256': SIGNATURE, 'x-platform-a-shop-domain': 'nobody.myplatform-a.com', 'x-platform-a-topic': 'products/update' }],
      ['/api/v1/platform-b/webhooks', { 'x-svc-store-id': 'st_nobody', 'x-svc-webhook-secret': 'whatever' }],
      ['/api/v1/platform-c/webhooks?store=st_nobody', { 'x-platform-c-webhook-signature': SIGNATURE, 'x-platform-c-webhook-topic': 'product.updated' }],
      ['/api/v1/platform-c/webhooks?store=st_nobody', {}],
    ];
    for (const [path, headers] of deliveries) {
      const { answered, state } = await stalledDelivery(path, headers);
      expect({ path, status: answered?.status }).toEqual({ path, status: 401 });
      expect(await answered!.json()).toMatchObject({ error: 'unverified_webhook' });
      expect(state.sent).toBeLessThanOrEqual(1); // nothing beyond what the stream offered up front was asked for
    }
  });

  test('webhook routes are rate limited per source address (SVC_RATE_WEBHOOK), IPv6 by network, before the body is read', async () => {
    const peer = { ip: '2001:db8:40:1::1' };
    await appWith({ SVC_RATE_WEBHOOK: '3' }, peer);
    const deliver = () => t.request('/api/v1/platform-b/webhooks', { method: 'POST', headers: { 'x-svc-store-id': 'st_nobody', 'x-svc-webhook-secret': 'x' }, body: '{}' });
    for (let i = 0; i < 3; i++) {
      peer.ip = `2001:db8:40:1::${i + 2}`;
      expect((await deliver()).status).toBe(401);
    }
    const limited = await deliver();
    expect(limited.status).toBe(429);
    expect(await limited.json()).toMatchObject({ error: 'rate_limited', tier: 'webhook', limit: 3 });
    // All webhook routes share the address's bucket; another address has its own.
    expect((await t.request('/api/v1/webhooks/platform-a/', { method: 'POST', body: '{}' })).status).toBe(429);
    peer.ip = '198.18.5.9';
    expect((await deliver()).status).toBe(401);
  });
});

describe('readBodyLimited, read by every POST route', () => {
  const post = (body: string | null, headers: Record<string, string> = {}) => new Request('http://localhost/x', { method: 'POST', body, headers });

  test('a declared oversize body is a rejected promise (413 payload_too_large), never a throw, and its body is left unread', async () => {
    const request = post('x'.repeat(100), { 'content-length': '100' });
    let reading: Promise<Uint8Array> | null = null;
    let thrown: unknown = null;
    try {
      reading = readBodyLimited(request, 99);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeNull();
    const refusal = await reading!.then(() => null, (error: unknown) => error as { status: number; code: string });
    expect(refusal).toMatchObject({ status: 413, code: 'payload_too_large' });
    expect(request.bodyUsed).toBe(false);
  });

  test('a body within the limit resolves to its exact bytes, and a request without one to no bytes', async () => {
    expect(new TextDecoder().decode(await readBodyLimited(post('{"a":1}'), 7))).toBe('{"a":1}');
    expect((await readBodyLimited(new Request('http://localhost/x'), 7)).length).toBe(0);
  });
});
