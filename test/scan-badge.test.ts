import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import { Window } from 'happy-dom';
import { fixedClock } from '../src/lib/clock.ts';
import { badgeSvg } from '../src/scans/badge.ts';
import { plainResponse } from '../src/lib/hot-route.ts';
import { badgeRoute } from '../src/scans/routes.ts';
import { verdana11Width } from '../src/scans/verdana.ts';
import { makeTestApp, type TestApp } from './helpers/app.ts';
import { TELEMETRY, scanPayload, signedInit, tokenInit } from './helpers/probe.ts';

const BADGE = '/api/v1/public/probe/badge';
const NOW = Date.parse('2026-03-01T12:00:00Z');
let t: TestApp;
afterEach(() => t?.close());

async function seed(scans: Record<string, unknown>[]) {
  const key = await t.keyWith('probe:scan');
  const response = await t.request('/api/v1/probe/scan-bulk', signedInit(key, JSON.stringify({ scans }), NOW));
  expect(response.status).toBe(200);
}

const scanOf = (hostname: string, grade: string, percentage: number, minutesAgo = 0) =>
  scanPayload({ hostname, url: `https://${hostname}/p/${minutesAgo}`, scannedAt: new Date(NOW - minutesAgo * 60_000).toISOString(), quality: { grade, percentage } });

/**
 * Minimal XML well-formedness: every tag closes in order, attribute values are quoted, and text
 * holds no raw `<` or bare `&`.
 */
function assertWellFormed(xml: string) {
  const stack: string[] = [];
  const token = /<(\/?)([A-Za-z][\w:-]*)((?:\s+[\w:-]+="[^"<]*")*)\s*(\/?)>|([^<]+)/y;
  let match: RegExpExecArray | null;
  let pos = 0;
  while (pos < xml.length) {
    token.lastIndex = pos;
    match = token.exec(xml);
    if (!match) throw new Error(`not well-formed at ${pos}: ${xml.slice(pos, pos + 40)}`);
    pos = token.lastIndex;
    const [, closing, name, , selfClosing, text] = match;
    if (text !== undefined) {
      if (/&(?!(amp|lt|gt|quot|apos);)/.test(text)) throw new Error(`bare & in text: ${text}`);
    } else if (closing) {
      if (stack.pop() !== name) throw new Error(`unbalanced </${name}>`);
    } else if (!selfClosing) stack.push(name!);
  }
  expect(stack).toEqual([]);
}

function parseSvg(svg: string) {
  const window = new Window();
  const doc = new window.DOMParser().parseFromString(svg, 'image/svg+xml');
  return doc.documentElement as unknown as Element;
}

describe('badge (spec §4.2, DESIGN §5)', () => {
  test('the SVG is well-formed shields "flat" with role, aria-label and title', async () => {
    t = await makeTestApp({ clock: fixedClock(NOW) });
    await seed([scanOf('shop.example.com', 'B', 82.4)]);
    const response = await t.request(`${BADGE}?domain=shop.example.com`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('image/svg+xml; charset=utf-8');
    const svg = await response.text();
    assertWellFormed(svg);
    const root = parseSvg(svg);
    expect(root.tagName.toLowerCase()).toBe('svg');
    expect(root.getAttribute('role')).toBe('img');
    expect(root.getAttribute('aria-label')).toBe('AI readiness: B 82%');
    expect(root.getAttribute('height')).toBe('20');
    expect(root.querySelector('title')?.textContent).toBe('AI readiness: B 82%');
    expect([...root.querySelectorAll('text')].map((e) => e.textContent)).toEqual(['AI readiness', 'AI readiness', 'B 82%', 'B 82%']);
  });

  test('the latest scan of the hostname decides the badge', async () => {
    t = await makeTestApp({ clock: fixedClock(NOW) });
    await seed([scanOf('shop.example.com', 'D', 40, 60), scanOf('shop.example.com', 'A', 97, 5), scanOf('other.example.com', 'F', 3, 1)]);
    const json = await (await t.request(`${BADGE}?domain=shop.example.com&format=json`)).json();
    expect(json).toEqual({ schemaVersion: 1, label: 'AI readiness', message: 'A 97%', color: 'brightgreen' });
  });

  test('colours per grade follow the badge-maker 6 palette: A brightgreen #4b0, B green #67ac09, C yellowgreen #95991a, D yellow #d8b800, E and F red #dd4343', async () => {
    t = await makeTestApp({ clock: fixedClock(NOW) });
    const expected = { A: ['brightgreen', '#4b0'], B: ['green', '#67ac09'], C: ['yellowgreen', '#95991a'], D: ['yellow', '#d8b800'], E: ['red', '#dd4343'], F: ['red', '#dd4343'] };
    await seed(Object.keys(expected).map((grade) => scanOf(`${grade.toLowerCase()}.example.com`, grade, 50)));
    for (const [grade, [name, hex]] of Object.entries(expected)) {
      const json = (await (await t.request(`${BADGE}?domain=${grade.toLowerCase()}.example.com&format=json`)).json()) as { color: string };
      expect(json.color).toBe(name!);
      const svg = await (await t.request(`${BADGE}?domain=${grade.toLowerCase()}.example.com`)).text();
      expect(parseSvg(svg).querySelectorAll('rect')[2]!.getAttribute('fill')).toBe(hex!);
    }
  });

  test('the badge widths grow with the text, measured with the Verdana 11px table', async () => {
    expect(verdana11Width('W')).toBeGreaterThan(verdana11Width('i'));
    expect(verdana11Width('AI readiness')).toBeCloseTo(68.71, 2);
    t = await makeTestApp({ clock: fixedClock(NOW) });
    await seed([scanOf('a.example.com', 'A', 100), scanOf('b.example.com', 'B', 1)]);
    const width = async (domain: string) => Number(parseSvg(await (await t.request(`${BADGE}?domain=${domain}`)).text()).getAttribute('width'));
    const wide = await width('a.example.com'); // "A 100%"
    const narrow = await width('b.example.com'); // "B 1%"
    const unscanned = await width('c.example.com'); // "not scanned"
    expect(wide).toBeGreaterThan(narrow);
    expect(unscanned).toBeGreaterThan(wide);
  });

  test('an unscanned domain gets a grey "not scanned" badge with 200', async () => {
    t = await makeTestApp({ clock: fixedClock(NOW) });
    const response = await t.request(`${BADGE}?domain=never.example.org&format=json`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ schemaVersion: 1, label: 'AI readiness', message: 'not scanned', color: 'lightgrey' });
    const svg = await (await t.request(`${BADGE}?domain=never.example.org`)).text();
    expect(svg).toContain('fill="#939393"');
    expect(svg).toContain('not scanned');
  });

  test('caching: Cache-Control max-age=300, s-maxage=300, an ETag, and 304 on If-None-Match', async () => {
    t = await makeTestApp({ clock: fixedClock(NOW) });
    await seed([scanOf('shop.example.com', 'C', 61)]);
    const first = await t.request(`${BADGE}?domain=shop.example.com`);
    expect(first.headers.get('cache-control')).toBe('max-age=300, s-maxage=300');
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^"[0-9a-f]{32}"$/);
    const again = await t.request(`${BADGE}?domain=shop.example.com`, { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    expect(again.headers.get('etag')).toBe(etag);
    // A new scan changes the badge, so the old validator no longer matches.
    await seed([scanOf('shop.example.com', 'A', 95, -1)]);
    expect((await t.request(`${BADGE}?domain=shop.example.com`, { headers: { 'if-none-match': etag } })).status).toBe(200);
    const json = await t.request(`${BADGE}?domain=shop.example.com&format=json`);
    expect(json.headers.get('etag')).not.toBe(etag);
  });

  test('a badge whose scan storage answers with a promise (PostgreSQL) is answered as well, with its ETag, and kept until the next commit', async () => {
    let lookups = 0;
    const route = badgeRoute(async () => (lookups++, { grade: 'A', percentage: 91.6 }), () => 1);
    const url = `http://localhost${BADGE}?domain=shop.example.com&format=json`;
    const late = route.answer(new Request(url), {}, plainResponse);
    expect(late).toBeInstanceOf(Promise);
    const response = await late;
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ message: 'A 92%', color: 'brightgreen' });
    const etag = response.headers.get('etag')!;
    const again = route.answer(new Request(url, { headers: { 'If-None-Match': etag } }), {}, plainResponse);
    expect(again).not.toBeInstanceOf(Promise);
    expect((again as Response).status).toBe(304);
    expect(lookups).toBe(1);
  });

  test('a missing or invalid domain is 400 naming the parameter', async () => {
    t = await makeTestApp({ clock: fixedClock(NOW) });
    for (const query of ['', '?domain=', '?domain=https://shop.example.com/', '?domain=a%20b', '?format=json']) {
      const response = await t.request(`${BADGE}${query}`);
      expect(response.status).toBe(400);
      const body = (await response.json()) as { error: string; detail: string };
      expect(body.error).toBe('invalid_query');
      expect(body.detail).toStartWith('domain:');
    }
    const badFormat = await t.request(`${BADGE}?domain=shop.example.com&format=png`);
    expect(badFormat.status).toBe(400);
    expect(((await badFormat.json()) as { detail: string }).detail).toStartWith('format:');
  });

  test('a hostile domain value never reaches the SVG or the error unescaped', async () => {
    t = await makeTestApp({ clock: fixedClock(NOW) });
    const hostile = encodeURIComponent('"><script>alert(1)</script><svg onload="x');
    const response = await t.request(`${BADGE}?domain=${hostile}`);
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toContain('application/json');
    expect(await response.text()).not.toContain('<script>');
  });

  test('every text in the SVG is escaped, label and message included', () => {
    const svg = badgeSvg({ label: '<b>&"\'', message: '</text><script>x</script>', color: 'red' });
    assertWellFormed(svg);
    expect(svg).not.toContain('<script>');
    const root = parseSvg(svg);
    expect(root.getAttribute('aria-label')).toBe('<b>&"\': </text><script>x</script>');
    expect(root.querySelectorAll('text')[2]!.textContent).toBe('</text><script>x</script>');
  });
});

describe('a trustworthy badge (issue 11): what the server can trust orders it, not what the scanner claims', () => {
  let clock = fixedClock(NOW);
  beforeEach(() => {
    clock = fixedClock(NOW);
  });
  const badgeOf = async (hostname: string) => ((await (await t.request(`${BADGE}?domain=${hostname}&format=json`)).json()) as { message: string }).message;
  const signed = async (payload: unknown) => t.request(TELEMETRY, signedInit(await t.keyWith('probe:scan'), JSON.stringify(payload), clock.now()));
  const scanAt = (grade: string, percentage: number, scannedAt: number) =>
    scanPayload({ hostname: 'pinned.example.com', url: `https://pinned.example.com/${scannedAt}`, scannedAt: new Date(scannedAt).toISOString(), quality: { grade, percentage } });

  test('scannedAt more than 5 minutes in the future is 400 scanned_at_in_future; 5 minutes ahead is accepted', async () => {
    t = await makeTestApp({ clock });
    const future = await signed(scanAt('A', 100, NOW + 5 * 60_000 + 1000));
    expect(future.status).toBe(400);
    const body = (await future.json()) as { error: string; detail: string };
    expect(body.error).toBe('scanned_at_in_future');
    expect(body.detail).toContain('5 minutes');
    expect((await signed(scanAt('B', 80, NOW + 5 * 60_000))).status).toBe(204);
    expect(await badgeOf('pinned.example.com')).toBe('B 80%');
  });

  test('a bulk item with scannedAt in the future is a per-item error; the others are stored', async () => {
    t = await makeTestApp({ clock });
    const key = await t.keyWith('probe:scan');
    const body = JSON.stringify({ scans: [scanAt('C', 50, NOW - 60_000), scanAt('A', 100, Date.parse('2099-01-01T00:00:00Z'))] });
    const result = (await (await t.request('/api/v1/probe/scan-bulk', signedInit(key, body, NOW))).json()) as { inserted: number; errors: { index: number; error: string }[] };
    expect(result.inserted).toBe(1);
    expect(result.errors).toEqual([expect.objectContaining({ index: 1, error: 'scanned_at_in_future' })]);
    expect(await badgeOf('pinned.example.com')).toBe('C 50%');
  });

  test('among scans of the same trust the most recently received decides, whatever scannedAt claims', async () => {
    t = await makeTestApp({ clock });
    await signed(scanAt('A', 99, NOW));
    clock.advance(60_000);
    // Received later, though it claims an older scan time: it is the newer answer.
    await signed(scanAt('D', 40, NOW - 30 * 86_400_000));
    expect(await badgeOf('pinned.example.com')).toBe('D 40%');
  });

  test('an anonymous (unverified lead) scan cannot pin the badge over signed scans, earlier or later', async () => {
    t = await makeTestApp({ clock });
    const anonymous = (await t.leads.create('anyone@example.com')).apiToken;
    expect((await t.request(TELEMETRY, tokenInit(anonymous, scanAt('A', 100, NOW)))).status).toBe(204);
    expect(await badgeOf('pinned.example.com')).toBe('A 100%');
    clock.advance(60_000);
    await signed(scanAt('C', 55, clock.now()));
    expect(await badgeOf('pinned.example.com')).toBe('C 55%');
    clock.advance(60_000);
    expect((await t.request(TELEMETRY, tokenInit(anonymous, scanAt('A', 100, clock.now())))).status).toBe(204);
    expect(await badgeOf('pinned.example.com')).toBe('C 55%');
  });

  test("a verified lead's scan outranks an unverified lead's and yields to a signed one", async () => {
    t = await makeTestApp({ clock });
    const unverified = (await t.leads.create('new@example.com')).apiToken;
    const verified = (await t.leads.create('known@example.com', true)).apiToken;
    await t.request(TELEMETRY, tokenInit(verified, scanAt('B', 75, NOW)));
    clock.advance(60_000);
    await t.request(TELEMETRY, tokenInit(unverified, scanAt('A', 100, clock.now())));
    expect(await badgeOf('pinned.example.com')).toBe('B 75%');
    clock.advance(60_000);
    await signed(scanAt('E', 20, clock.now()));
    expect(await badgeOf('pinned.example.com')).toBe('E 20%');
    clock.advance(60_000);
    await t.request(TELEMETRY, tokenInit(verified, scanAt('A', 98, clock.now())));
    expect(await badgeOf('pinned.example.com')).toBe('E 20%');
  });
});
