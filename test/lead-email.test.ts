import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { hiddenCharacterIn, normalizeEmail } from '../src/lib/email.ts';
import { bearer, jsonRequest, makeTestApp, type TestApp } from './helpers/app.ts';

// One email check serves every surface a lead's email arrives by (src/lib/email.ts): the public
// sign-up, the start page's form, the admin API's lead search and the CLI (test/e2e/cli.test.ts).

/** Characters that hide or reorder what an operator reads, each refused wherever it sits in an address. */
const HIDDEN: [string, string][] = [
  ['\u0000', 'NUL'],
  ['\u0007', 'BEL'],
  ['\u0008', 'backspace'],
  ['\u001b', 'ESC'],
  ['\u007f', 'DEL'],
  ['\u0085', 'C1 next line'],
  ['\u009b', 'C1 control sequence introducer'],
  ['\u00ad', 'soft hyphen'],
  ['\u061c', 'Arabic letter mark'],
  ['\u200b', 'zero-width space'],
  ['\u200d', 'zero-width joiner'],
  ['\u200e', 'left-to-right mark'],
  ['\u200f', 'right-to-left mark'],
  ['\u2028', 'line separator'],
  ['\u2029', 'paragraph separator'],
  ['\u202a', 'left-to-right embedding'],
  ['\u202b', 'right-to-left embedding'],
  ['\u202c', 'pop directional formatting'],
  ['\u202d', 'left-to-right override'],
  ['\u202e', 'right-to-left override'],
  ['\u2066', 'left-to-right isolate'],
  ['\u2067', 'right-to-left isolate'],
  ['\u2068', 'first strong isolate'],
  ['\u2069', 'pop directional isolate'],
  ['\ufeff', 'byte order mark'],
  ['\ufff9', 'interlinear annotation anchor'],
  ['\ufffd', 'replacement character (bytes that were not UTF-8)'],
  ['\ud800', 'lone surrogate'],
];

/** Where the character sits: inside the local part, inside the domain, and at either end (where trimming must not wash it out). */
const PLACES: [string, (c: string) => string][] = [
  ['local part', (c) => `ev${c}il@example.com`],
  ['domain', (c) => `evil@exam${c}ple.com`],
  ['leading', (c) => `${c}evil@example.com`],
  ['trailing', (c) => `evil@example.com${c}`],
];

const hiddenOf = (email: string) => HIDDEN.find(([c]) => email.includes(c))![0];
const codePoint = (c: string) => `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;

describe('the email check', () => {
  test.each(HIDDEN)('refuses %p (%s) anywhere in the address, naming its code point', (c) => {
    for (const [, place] of PLACES) expect(() => normalizeEmail(place(c))).toThrow(codePoint(c));
    expect(hiddenCharacterIn(`a${c}`)).toBe(codePoint(c));
  });

  test('keeps accepting real addresses: plus tags, dots, non-ASCII local parts, surrounding spaces', () => {
    expect(normalizeEmail(' Ann.Lee+probe@Shop-One.example ')).toBe('ann.lee+probe@shop-one.example');
    expect(normalizeEmail('jürgen@example.de')).toBe('jürgen@example.de');
    expect(normalizeEmail('o\'brien@example.ie')).toBe("o'brien@example.ie");
    expect(hiddenCharacterIn('ann@example.com')).toBeNull();
  });
});

describe('lead emails with control or invisible formatting characters are refused with 400 on every surface', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeTestApp({ env: { SVC_RATE_ANONYMOUS: '100000' } });
  });
  afterAll(async () => {
    await t.close();
  });
  const cases = HIDDEN.flatMap(([c, name]) => PLACES.map(([where, place]): [string, string, string] => [name, where, place(c)]));
  // A form or a URL carries UTF-8, which cannot hold a lone surrogate (JSON's \u escape can).
  const sendable = cases.filter(([, , email]) => email.isWellFormed());

  test('the public sign-up API', async () => {
    for (const [name, where, email] of cases) {
      const res = await t.request('/api/v1/public/leads', jsonRequest('POST', { email }));
      expect(res.status, `${name} (${where})`).toBe(400);
      expect((await res.json()).error).toBe('invalid_email');
    }
    expect((await t.request('/api/v1/public/leads', jsonRequest('POST', { email: 'fine@example.com' }))).status).toBe(201);
  });

  test('the start page’s form', async () => {
    for (const [name, where, email] of sendable) {
      const res = await t.request('/', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ email }).toString() });
      expect(res.status, `${name} (${where})`).toBe(400);
      expect(await res.text()).toContain(`The address holds an invisible or control character (${codePoint(hiddenOf(email))}). Type it again.`);
    }
  });

  test('the admin API’s lead search', async () => {
    const admin = bearer(await t.keyWith('admin'));
    for (const [c, name] of HIDDEN.filter(([c]) => c.isWellFormed())) {
      const res = await t.request(`/api/v1/admin/leads?email=${encodeURIComponent(`evil${c}`)}`, { headers: admin });
      expect(res.status, name).toBe(400);
      expect(await res.json()).toEqual({ error: 'invalid_query', detail: `email: must not contain control or invisible formatting characters (found ${codePoint(c)})` });
    }
  });

  test('nothing of them was stored', async () => {
    const emails = (await t.query('SELECT email FROM leads')).map((row) => row.email);
    expect(emails).toEqual(['fine@example.com']);
  });
});
