import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { ApiFailure } from '../src/console/ui/api.ts';
import { errorSentence, NOT_FROM_CONSOLE_ENDPOINTS, SENTENCES } from '../src/console/ui/errors.ts';
import { makeTestApp, type TestApp } from './helpers/app.ts';

// The console shows API refusals in its own words (src/console/ui/errors.ts). Every error code the
// API documents (/openapi.json) either has a sentence there or is one the console deliberately
// leaves to the fallback, because no endpoint it calls answers with it.

/** The endpoints the console calls: the admin and dashboard API and its session. */
const CONSOLE_ENDPOINTS = /^\/api\/v1\/(admin|dashboard|console)\//;

interface Documented {
  status: number;
  code: string;
  detail: string;
  operation: string;
}

let t: TestApp;
let documented: Documented[];

beforeAll(async () => {
  t = await makeTestApp();
  const doc = (await (await t.request('/openapi.json')).json()) as { paths: Record<string, Record<string, { responses?: Record<string, any> }>> };
  documented = [];
  for (const [path, operations] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        const json = response?.content?.['application/json'];
        const examples = json?.examples ? Object.values<any>(json.examples).map((e) => e.value) : json?.example !== undefined ? [json.example] : [];
        for (const example of examples) {
          if (typeof example?.error === 'string') documented.push({ status: Number(status), code: example.error, detail: example.detail, operation: `${method.toUpperCase()} ${path}` });
        }
      }
    }
  }
});
afterAll(() => t?.close());

describe('the console’s error sentences', () => {
  test('every error code the API documents has a sentence, or is deliberately left to the fallback', () => {
    const codes = [...new Set(documented.map((d) => d.code))];
    expect(codes.length).toBeGreaterThan(30);
    expect(codes.filter((code) => !(code in SENTENCES) && !NOT_FROM_CONSOLE_ENDPOINTS.has(code))).toEqual([]);
    expect(Object.keys(SENTENCES).filter((code) => NOT_FROM_CONSOLE_ENDPOINTS.has(code))).toEqual([]);
  });

  test('a code left to the fallback is never documented for an endpoint the console calls', () => {
    const met = documented.filter((d) => CONSOLE_ENDPOINTS.test(d.operation.split(' ')[1]!) && NOT_FROM_CONSOLE_ENDPOINTS.has(d.code));
    expect(met.map((d) => `${d.operation}: ${d.code}`)).toEqual([]);
  });

  test('no sentence for a console endpoint’s documented error shows its code, its status or a CLI command', () => {
    const shown = documented.filter((d) => CONSOLE_ENDPOINTS.test(d.operation.split(' ')[1]!)).map((d) => ({ d, text: errorSentence(new ApiFailure(d.status, d.code, d.detail)) }));
    expect(shown.length).toBeGreaterThan(50);
    for (const { d, text } of shown) {
      expect([d.operation, text]).not.toEqual([d.operation, expect.stringContaining(d.code)]);
      expect([d.operation, text]).not.toEqual([d.operation, expect.stringMatching(new RegExp(`\\b${d.status}\\b|\\bsvc (keys|leads|stores|probe|faqs|serve|doctor|restore|migrate)\\b|--[a-z]`))]);
      expect(text).toMatch(/^[A-Zs].*[.:]$/);
    }
  });

  test('the sentences say what to do: a missing key’s page, a store of another’s, a wait', () => {
    expect(errorSentence(new ApiFailure(400, 'store_required', 'a products:read key is for the FAQ widget, which serves one store: give its storeId (svc keys create --store STORE_ID); admin keys need none'))).toBe(
      'A products:read key serves the FAQ widget of one store: choose the store it is for.',
    );
    expect(errorSentence(new ApiFailure(404, 'not_found', 'no lead with id "lead_1"'))).toBe('This lead no longer exists: someone may have removed it. Reload the page.');
    expect(errorSentence(new ApiFailure(429, 'rate_limited', 'the anonymous tier allows 10 sign-ins per minute; retry in 6 s'))).toBe('Too many attempts from this address: try again in 6 seconds.');
    expect(errorSentence(new ApiFailure(401, 'invalid_api_key', 'x'), { invalid_api_key: 'Sign-in words it its own way.' })).toBe('Sign-in words it its own way.');
    expect(errorSentence(new ApiFailure(0, 'unreachable', 'svc could not be reached'))).toBe('svc could not be reached: check the connection and try again.');
    expect(errorSentence(new ApiFailure(403, 'origin_not_allowed', "the page's domain is not among the key's allowed domains"))).toBe("svc refused this: the page's domain is not among the key's allowed domains.");
  });
});
