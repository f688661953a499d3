import { describe, expect, test } from 'bun:test';
import { Glob } from 'bun';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { lintSource, type Finding, type LintResult } from './helpers/secret-lint.ts';

const ROOT = path.resolve(import.meta.dir, '..');

let scanned: (LintResult & { files: number }) | null = null;

/** Every source file of src/, parsed once per run. */
function lintSrc(): LintResult & { files: number } {
  if (scanned) return scanned;
  const result: LintResult & { files: number } = { findings: [], safeEqualCalls: [], files: 0 };
  for (const file of [...new Glob('src/**/*.{ts,tsx}').scanSync(ROOT)].sort()) {
    const { findings, safeEqualCalls } = lintSource(file, readFileSync(path.join(ROOT, file), 'utf8'));
    result.findings.push(...findings);
    result.safeEqualCalls.push(...safeEqualCalls);
    result.files++;
  }
  return (scanned = result);
}

const format = (f: Finding) => `  ${f.file}:${f.line}:${f.column}  ${f.why}: ${f.code}`;
const flagged = (source: string) => lintSource('fixture.ts', source).findings.map((f) => `${f.line}: ${f.why}`);

describe('security by default: secrets are compared in constant time', () => {
  test('every comparison of a secret, signature, token or key in src/ goes through safeEqual', () => {
    const { findings, files } = lintSrc();
    expect(files).toBeGreaterThan(50);
    if (findings.length > 0) {
      throw new Error(
        `${findings.length} comparison(s) of a secret without the constant-time helper; use safeEqual from src/lib/crypto.ts ` +
          `(what counts as a secret: test/helpers/secret-lint.ts):\n${findings.map(format).join('\n')}`,
      );
    }
    // Parses every file of src/: seconds of CPU on a shared 2-core machine, more as src/ grows.
  }, 30_000);

  test('every safeEqual call in src/ compares something the rule recognises as a secret (so the rule sees the real sources)', () => {
    const { safeEqualCalls } = lintSrc();
    // Keys, lead tokens, probe signatures, platform A/C signatures, platform-B webhook secrets.
    expect(safeEqualCalls.length).toBeGreaterThanOrEqual(5);
    const unrecognised = safeEqualCalls.filter((c) => !c.recognised);
    if (unrecognised.length > 0) {
      throw new Error(
        'the secret-comparison rule does not recognise the secret in these safeEqual calls; teach it the new source in test/helpers/secret-lint.ts:\n' +
          unrecognised.map((c) => `  ${c.file}:${c.line}  ${c.code}`).join('\n'),
      );
    }
  });
});

describe('the secret-comparison rule itself', () => {
  const violations: [string, string][] = [
    ['a signature compared with !==', 'function f(expected: string, signature: string) { if (expected !== signature) throw 1; }'],
    ['an HMAC compared with == to a header value', "function f(k: string, b: string, h: Headers) { return hmacSha256(k, b, 'hex') == h.get('x') ; }"],
    ['a value read from a secret header', "function f(h: Headers, stored: string) { const raw = h.get('x-api-key'); return raw === stored; }"],
    ['a header named by a constant whose property is secret', 'function f(h: Headers, s: string) { return h.get(PLATFORM_B_HEADERS.secret) === s; }'],
    ['a value derived through trim/toLowerCase and ??', "function f(h: Headers, e: string) { const v = (h.get('x-probe-signature') ?? '').trim().toLowerCase(); return e === v; }"],
    ['a variable derived from a derived variable', 'function f(k: string, b: string, x: string) { const mac = hmacSha256(k, b); const expected = mac; return expected === x; }'],
    ['a prefix comparison with startsWith', 'function f(expected: string, provided: string) { return hmacSha256(expected, provided).startsWith(provided); }'],
    ['a truncated comparison with slice', 'function f(a: string, signature: string) { return a.slice(0, 8) === signature.slice(0, 8); }'],
    ['a character-by-character comparison', 'function f(token: string, guess: string) { return token[0] === guess[0]; }'],
    ['a stored secret property', 'function f(store: { webhookSecret: string }, given: string) { return store.webhookSecret === given; }'],
    ['a snake_case stored hash', 'function f(row: { key_hash: string }, h: string) { return h !== row.key_hash; }'],
    ['a secret-returning method', 'function f(stores: any, s: any, given: string) { return stores.webhookSecretOf(s) === given; }'],
    ['Buffer.compare on a digest', "function f(a: Buffer, h: any) { return Buffer.compare(a, h.digest()) === 0; }"],
    ['Buffer#equals on a signature', 'function f(signature: Buffer, b: Buffer) { return signature.equals(b); }'],
    ['a switch over a token', "function f(token: string) { switch (token) { case 'a': return 1; } return 0; }"],
    ['a secret compared with a hard-coded value', "function f(apiKey: string) { return apiKey === 'sk_live_test'; }"],
    ['a session cookie value', "function f(request: Request, stored: string) { const raw = cookieValue(request, 'svc_session'); return raw === stored; }"],
    ['an array holding a secret searched with includes', 'function f(rawKey: string, allowed: string[]) { return allowed.includes(rawKey); }'],
  ];
  for (const [name, source] of violations) {
    test(`flags ${name}`, () => {
      expect(flagged(source)).toHaveLength(1);
    });
  }

  const allowed: [string, string][] = [
    ['safeEqual itself', 'function f(expected: string, signature: string) { return safeEqual(expected, signature); }'],
    ['presence checks: null, undefined, empty string', "function f(token: string | null, s?: string) { return token !== null && s !== undefined && token !== ''; }"],
    ['typeof and length checks', "function f(secret: unknown, signature: string) { return typeof secret === 'string' && signature.length === 64; }"],
    ['comparisons of what is not secret', "function f(key: { storeId: string | null; scopes: string[] }) { return key.storeId === null || key.scopes.includes('admin'); }"],
    ['rate-limit tokens (plural) are not secrets', 'function f(tokens: number, count: number) { return tokens === count; }'],
    ['names about a secret: its cookie name, its display prefix, its issue time', "function f(sessionCookieName: string, keyPrefix: string, tokenIssuedAt: number, a: string) { return a === sessionCookieName || a === keyPrefix || tokenIssuedAt === Number(a); }"],
    ['a predicate about a signature is a boolean', 'function f(b: Uint8Array, s: string) { return verifyBodySignature(s, b, s) === true; }'],
  ];
  for (const [name, source] of allowed) {
    test(`allows ${name}`, () => {
      expect(flagged(source)).toEqual([]);
    });
  }

  test('a finding names the file, line and column', () => {
    const [finding] = lintSource('src/x.ts', 'const a = 1;\n\nexport const ok = (signature: string, b: string) => b === signature;\n').findings;
    expect(finding).toMatchObject({ file: 'src/x.ts', line: 3, column: 53, code: 'b === signature' });
  });
});
