import { ApiError } from '../lib/errors.ts';
import { andThen, type MaybePromise } from '../lib/maybe-promise.ts';
import { keyHasScope, type ApiKey, type KeyStore, type Scope } from './keys.ts';

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

const invalidKey = () =>
  new ApiError(401, 'invalid_api_key', 'the API key is unknown, malformed or revoked', {
    'WWW-Authenticate': 'Bearer error="invalid_token"',
  });

/**
 * Resolve `Authorization: Bearer sk_live_...` to an active key holding `scope`, or throw 401/403:
 * at once for a key verified in memory, else through the promise (src/auth/verified-cache.ts).
 */
export function authorizeBearer(keys: KeyStore, header: string | null, scope: Scope): MaybePromise<ApiKey> {
  if (!header) {
    throw new ApiError(401, 'unauthorized', 'missing Authorization header; send Authorization: Bearer sk_live_...', {
      'WWW-Authenticate': 'Bearer',
    });
  }
  const raw = BEARER.exec(header)?.[1];
  if (!raw) throw invalidKey();
  return andThen(keys.verify(raw), (key) => {
    if (!key) throw invalidKey();
    return requireScope(key, scope);
  });
}

/** `key` when it holds `scope` (admin implies every scope), else 403 `insufficient_scope`. */
export function requireScope(key: ApiKey, scope: Scope): ApiKey {
  if (!keyHasScope(key, scope)) {
    throw new ApiError(403, 'insufficient_scope', `this key lacks the ${scope} scope`, {
      'WWW-Authenticate': `Bearer error="insufficient_scope", scope="${scope}"`,
    });
  }
  return key;
}

/**
 * Another way to name the calling key (the web console's session cookie): the key, null when the
 * request does not use it (then the Authorization header is required), or an ApiError thrown.
 */
export type AlternativeAuth = (request: Request) => MaybePromise<ApiKey | null>;

/**
 * The access check (lib/access.ts) of routes that need `scope`: the console session cookie (for
 * requests from svc's own pages, when there is no Authorization header) or `Authorization: Bearer`.
 * Runs on the route the router matched, before its body is read, so an unauthenticated caller
 * learns nothing from it and cannot make the server parse a body. Returns the calling key.
 */
export function scopeCheck(keys: KeyStore, scope: Scope, alternative?: AlternativeAuth) {
  return ({ request }: { request: Request }): MaybePromise<ApiKey> => {
    const header = request.headers.get('authorization');
    // An explicit Authorization header always wins over a session cookie.
    const sessionKey = header === null && alternative ? alternative(request) : null;
    return andThen(sessionKey, (sessionKey) => (sessionKey ? requireScope(sessionKey, scope) : authorizeBearer(keys, header, scope)));
  };
}
