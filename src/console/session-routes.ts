import { Elysia, t } from 'elysia';
import type { AlternativeAuth } from '../auth/guard.ts';
import { keyHasScope, type ApiKey, type KeyStore } from '../auth/keys.ts';
import type { JsonBodyHook } from '../lib/body.ts';
import { ApiError } from '../lib/errors.ts';
import { andThen, type MaybePromise } from '../lib/maybe-promise.ts';
import { crossOriginProblem } from '../lib/same-origin.ts';
import type { SessionStore } from './sessions.ts';
import { apiDoc, integer, nullable } from '../lib/api-doc.ts';

const sessionView = t.Object({
  key: t.Object({ id: t.String(), name: t.String(), keyPrefix: t.String(), scopes: t.Array(t.String()), storeId: nullable(t.String()) }),
  idleMinutes: integer({ description: 'The session ends after this long without a request' }),
});
const sessionExample = { key: { id: 'key_01JD8M1N2P3Q4R5S6T7V8W9X0Y', name: 'ops', keyPrefix: 'sk_live_Ab3d', scopes: ['admin'], storeId: null }, idleMinutes: 30 };
const sameOriginOnly = 'Only from svc’s own pages (the Origin must be the base URL’s, never taken from the Host header).';
const docs = {
  signIn: apiDoc({
    summary: 'Sign in to the console',
    description: `Exchanges an API key with \`admin\` or \`dashboard:read\` for an HttpOnly, SameSite=Strict session cookie; the key is not stored in the browser. ${sameOriginOnly}`,
    tag: 'console',
    auth: 'public',
    limit: { unit: 'sign-ins', bucket: 'sign-in' },
    responses: { 201: { description: 'Signed in; the answer sets the session cookie', schema: sessionView, example: sessionExample, headers: { 'Set-Cookie': 'The session cookie: HttpOnly, SameSite=Strict, Path / (Secure and __Host- prefixed on https)' } } },
    errors: [
      [400, 'invalid_request', 'key: Expected string'],
      [401, 'invalid_api_key', 'the API key is unknown, malformed or revoked'],
      [403, 'insufficient_scope', 'the console needs a key with the admin or dashboard:read scope'],
      [403, 'cross_origin_refused', 'the request comes from another site; the console accepts only requests from its own pages'],
      [429, 'rate_limited', 'the anonymous tier allows 10 sign-ins per minute; retry in 6 s'],
    ],
    bodyExample: { key: 'sk_live_Ab3dEfGhIjKlMnOpQrStUvWxYz0123456789abcdefg' },
  }),
  current: apiDoc({
    summary: 'Who is signed in',
    description: `The session’s key (its \`id\` tells which key the console acts with), or 204 when there is no live session: no cookie, or the cookie’s session has ended (the answer then clears the cookie). Not signed in is an answer, not an error, so the console asks on every load without a failed request. ${sameOriginOnly}`,
    tag: 'console',
    auth: 'session',
    responses: {
      200: { description: 'The session’s key', schema: sessionView, example: sessionExample },
      204: { description: 'No live session; a cookie that was sent is cleared', headers: { 'Set-Cookie': 'Clears an ended session’s cookie (Max-Age=0); absent when no cookie was sent' } },
    },
  }),
  signOut: apiDoc({ summary: 'Sign out', description: `Ends the session and clears the cookie; without a session it only clears the cookie. ${sameOriginOnly}`, tag: 'console', auth: 'public', responses: { 204: { description: 'Signed out' } }, errors: [[403, 'cross_origin_refused', 'the request comes from another site; the console accepts only requests from its own pages']] }),
};

export const SESSION_PATH = '/api/v1/console/session';

/** `__Host-` pins the cookie to this host and path `/` when it can be Secure (an https base URL). */
export const sessionCookieName = (secure: boolean) => (secure ? '__Host-svc_session' : 'svc_session');

/** One cookie's value from the Cookie header, or null. */
export function cookieValue(request: Request, name: string): string | null {
  const header = request.headers.get('cookie');
  if (!header) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

const crossOrigin = (problem: string) => new ApiError(403, 'cross_origin_refused', `${problem}; the console accepts only requests from its own pages`);
const noSession = () => new ApiError(401, 'session_expired', 'the console session has ended (signed out, idle too long, or its key was revoked); sign in again');

interface SessionDeps {
  sessions: SessionStore;
  keys: KeyStore;
  baseUrl: string;
  /** svc's own origins (lib/same-origin.ts ownOriginsOf): the only pages the console answers. */
  ownOrigins: readonly string[];
  idleMinutes: number;
  jsonBody: JsonBodyHook;
  /** The key the request's access check identified (lib/access.ts). */
  callerOf: (request: Request) => ApiKey | null;
}

/**
 * The key of the session a request's cookie names, as storage answers (a promise): null when that
 * session has ended; undefined, at once, without the cookie. A request that carries the cookie
 * from another site is refused (crossOriginProblem): the cookie acts only for svc's own pages.
 */
export type SessionLookup = (request: Request) => MaybePromise<ApiKey | null> | undefined;

export function consoleSessionLookup({ sessions, baseUrl, ownOrigins }: Pick<SessionDeps, 'sessions' | 'baseUrl' | 'ownOrigins'>): SessionLookup {
  const name = sessionCookieName(baseUrl.startsWith('https:'));
  return (request) => {
    const raw = cookieValue(request, name);
    if (raw === null) return undefined;
    const problem = crossOriginProblem(request, ownOrigins);
    if (problem) throw crossOrigin(problem);
    return sessions.resolve(raw);
  };
}

/** The session cookie as the scope guard's alternative to `Authorization: Bearer`: a session acts with its key's scopes; an ended one is 401. */
export function consoleSessionAuth(lookup: SessionLookup): AlternativeAuth {
  return (request) => {
    const found = lookup(request);
    if (found === undefined) return null;
    return andThen(found, (key) => {
      if (key === null) throw noSession();
      return key;
    });
  };
}

/**
 * The access check of the session routes themselves: every request goes on, with the session's key
 * as its caller when it has a live session (so "not signed in" is an answer there, not a 401); one
 * that carries the cookie from another site is refused.
 */
export function sessionCheck(lookup: SessionLookup) {
  return ({ request }: { request: Request }): MaybePromise<ApiKey | undefined> | undefined => {
    const found = lookup(request);
    return found === undefined ? undefined : andThen(found, (key) => key ?? undefined);
  };
}

const view = (key: ApiKey, idleMinutes: number) => ({
  key: { id: key.id, name: key.name, keyPrefix: key.keyPrefix, scopes: key.scopes, storeId: key.storeId },
  idleMinutes,
});

/**
 * The console's session exchange: POST a pasted API key for a session cookie (HttpOnly,
 * SameSite=Strict, Secure on https), GET who is signed in, DELETE to sign out. The raw key is
 * never stored, in the browser or here.
 */
export function consoleSessionRoutes({ sessions, keys, baseUrl, ownOrigins, idleMinutes, jsonBody, callerOf }: SessionDeps) {
  const secure = baseUrl.startsWith('https:');
  const name = sessionCookieName(secure);
  const cookie = (value: string, extra = '') => `${name}=${value}; Path=/; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}${extra}`;
  const sameOrigin = (request: Request) => {
    const problem = crossOriginProblem(request, ownOrigins);
    if (problem) throw crossOrigin(problem);
  };
  return new Elysia({ name: 'console-session' })
    .onParse(jsonBody)
    .post(
      SESSION_PATH,
      async ({ request, body, set }) => {
        sameOrigin(request);
        const key = await keys.verify(body.key.trim());
        if (!key) throw new ApiError(401, 'invalid_api_key', 'the API key is unknown, malformed or revoked');
        if (!keyHasScope(key, 'dashboard:read')) {
          throw new ApiError(403, 'insufficient_scope', 'the console needs a key with the admin or dashboard:read scope');
        }
        set.status = 201;
        set.headers['set-cookie'] = cookie(await sessions.create(key.id));
        set.headers['cache-control'] = 'no-store';
        return view(key, idleMinutes);
      },
      { body: t.Object({ key: t.String({ maxLength: 200 }) }, { additionalProperties: false }), detail: docs.signIn },
    )
    .get(SESSION_PATH, ({ request, set }) => {
      set.headers['cache-control'] = 'no-store';
      // The route declares the session (docs.current): its check identified the session's key, if any.
      const key = callerOf(request);
      if (key) return view(key, idleMinutes);
      set.status = 204;
      if (cookieValue(request, name) !== null) set.headers['set-cookie'] = cookie('', '; Max-Age=0');
    }, { detail: docs.current })
    .delete(SESSION_PATH, async ({ request, set }) => {
      sameOrigin(request);
      const raw = cookieValue(request, name);
      if (raw !== null) await sessions.end(raw);
      set.status = 204;
      set.headers['set-cookie'] = cookie('', '; Max-Age=0');
    }, { detail: docs.signOut });
}
