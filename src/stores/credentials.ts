import type { Platform } from './types.ts';
import { ApiError } from '../lib/errors.ts';
import { isShopDomain } from '../platforms/platform-a.ts';

/** Credentials as saved by the operator; kept only sealed in the database. */
export type StoreCredentials =
  | { kind: 'own-app'; clientSecret: string; accessToken: string }
  | { kind: 'via-app' }
  | { kind: 'token-only'; accessToken: string }
  | { kind: 'api-token'; storeHash: string; accessToken: string }
  | { kind: 'rest-keys'; siteUrl: string; consumerKey: string; consumerSecret: string };

export interface ParsedCredentials {
  credentials: StoreCredentials;
  /** What deliveries identify the store by: shop domain (A), store hash (B), site URL (C). */
  platformRef: string;
}

const invalid = (detail: string) => new ApiError(400, 'invalid_credentials', detail);

function text(input: Record<string, unknown>, field: string, max = 512): string {
  const value = input[field];
  if (typeof value !== 'string' || value.trim() === '' || value.length > max) throw invalid(`credentials.${field} must be a non-empty string of at most ${max} characters`);
  return value.trim();
}

function onlyFields(input: Record<string, unknown>, allowed: string[], platform: string): void {
  const extra = Object.keys(input).filter((k) => !allowed.includes(k));
  if (extra.length) throw invalid(`unexpected credentials field(s) for ${platform}: ${extra.join(', ')}`);
}

/** A site URL for platform C: absolute http(s), no query or fragment, no trailing slash. */
export function normalizeSiteUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalid('credentials.siteUrl must be an absolute http(s) URL');
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.search || url.hash || url.username) {
    throw invalid('credentials.siteUrl must be an http(s) URL without query, fragment or user info');
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/** Validate the per-platform credential shapes of DESIGN §5 and decide the authentication mode. */
export function parseCredentials(platform: Platform, domain: string, input: Record<string, unknown>, shopSuffix: string): ParsedCredentials {
  switch (platform) {
    case 'platform-a': {
      if (!isShopDomain(domain, shopSuffix)) throw new ApiError(400, 'invalid_domain', `a platform-a store's domain must be <name>.${shopSuffix}`);
      if (input.viaApp !== undefined) {
        onlyFields(input, ['viaApp'], platform);
        if (input.viaApp !== true) throw invalid('credentials.viaApp must be true');
        return { credentials: { kind: 'via-app' }, platformRef: domain };
      }
      onlyFields(input, ['clientSecret', 'accessToken'], platform);
      const accessToken = text(input, 'accessToken');
      if (input.clientSecret === undefined) return { credentials: { kind: 'token-only', accessToken }, platformRef: domain };
      return { credentials: { kind: 'own-app', clientSecret: text(input, 'clientSecret'), accessToken }, platformRef: domain };
    }
    case 'platform-b': {
      onlyFields(input, ['storeHash', 'accessToken'], platform);
      const storeHash = text(input, 'storeHash', 64).toLowerCase();
      if (!/^[a-z0-9]{1,64}$/.test(storeHash)) throw invalid('credentials.storeHash must be letters and digits only');
      return { credentials: { kind: 'api-token', storeHash, accessToken: text(input, 'accessToken') }, platformRef: storeHash };
    }
    case 'platform-c': {
      onlyFields(input, ['siteUrl', 'consumerKey', 'consumerSecret'], platform);
      const siteUrl = normalizeSiteUrl(text(input, 'siteUrl', 2048));
      return { credentials: { kind: 'rest-keys', siteUrl, consumerKey: text(input, 'consumerKey'), consumerSecret: text(input, 'consumerSecret') }, platformRef: siteUrl.toLowerCase() };
    }
  }
}
