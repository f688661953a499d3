import { keyHasScope, type ApiKey, type KeyStore } from '../auth/keys.ts';
import { ApiError } from '../lib/errors.ts';
import type { MaybePromise } from '../lib/maybe-promise.ts';

/** Host name of an Origin or Referer value (port ignored), or null when it has none (`null`, garbage). */
export function hostOf(value: string | null): string | null {
  if (!value) return null;
  try {
    const url = new URL(value);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
    return url.hostname.toLowerCase().replace(/\.$/, '') || null;
  } catch {
    return null;
  }
}

/**
 * True when `host` is one of `allowedDomains`: an exact host, or `*.example.com` for any subdomain
 * of example.com (not example.com itself). Label-wise, so `example.com.evil.test` never matches.
 */
export function hostAllowed(host: string, allowedDomains: readonly string[]): boolean {
  return allowedDomains.some((entry) => (entry.startsWith('*.') ? host.endsWith(entry.slice(1)) && host.length > entry.length - 1 : host === entry));
}

const refuse = (code: string, detail: string) => new ApiError(403, code, detail);

/**
 * The widget's key check (spec §5, §7): an active `sk_live_` key with `products:read` and no other
 * scope (a broader one, such as admin, must not sit in page source), bound to a store, called from a page whose Origin (or, without Origin, Referer) host is in the
 * key's allowedDomains, or from a page of svc itself (`ownPage`: the console's widget preview) when
 * the key allows any page at all (an empty allowedDomains allows none).
 * Every refusal is 403. Returns the key: at once when it was verified in memory, else a promise.
 */
export function authorizeWidget(keys: KeyStore, headers: Headers, ownPage = false): MaybePromise<ApiKey & { storeId: string }> {
  const raw = headers.get('x-api-key');
  if (!raw) throw refuse('missing_api_key', 'send the widget key in the X-Api-Key header');
  const key = keys.verify(raw.trim());
  return key instanceof Promise ? key.then((verified) => widgetKey(verified, headers, ownPage)) : widgetKey(key, headers, ownPage);
}

/** The checks of authorizeWidget on the verified key (null: unknown, malformed or revoked). */
function widgetKey(key: ApiKey | null, headers: Headers, ownPage: boolean): ApiKey & { storeId: string } {
  if (!key) throw refuse('invalid_api_key', 'the API key is unknown, malformed or revoked');
  if (!keyHasScope(key, 'products:read')) throw refuse('insufficient_scope', 'this key lacks the products:read scope');
  // The widget's key is readable by anyone in the storefront's page source: it may read products, nothing more.
  const broader = key.scopes.filter((scope) => scope !== 'products:read');
  if (broader.length > 0) {
    throw refuse('key_too_broad', `this key also has ${broader.join(', ')}; a widget key sits in the page source, so it must have products:read and nothing else: create one for the widget`);
  }
  if (key.storeId === null) throw refuse('key_not_bound', 'this key is not bound to a store');
  // Checked before the own-page pass: a key that allows no page must not look working in the preview.
  if (key.allowedDomains.length === 0) throw refuse('origin_not_allowed', "this key's allowedDomains is empty, so it allows no page: create a widget key with the storefront's hosts");
  const origin = headers.get('origin');
  if (ownPage) return key as ApiKey & { storeId: string };
  const referer = headers.get('referer');
  if (origin === null && referer === null) throw refuse('origin_required', 'the request carries neither Origin nor Referer');
  const host = origin !== null ? hostOf(origin) : hostOf(referer);
  if (host === null || !hostAllowed(host, key.allowedDomains)) throw refuse('origin_not_allowed', "the page's domain is not in this key's allowedDomains");
  return key as ApiKey & { storeId: string };
}
