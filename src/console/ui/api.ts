// A key as the admin API answers it (creation, listing, revocation), with its last use.
import type { ListedApiKey as ApiKey } from '../../auth/keys.ts';
import type { Lead } from '../../auth/leads.ts';
import type { RemovalResponse, StoreResponse } from '../../stores/admin.ts';
import type { StoreHoldings } from '../../stores/removal.ts';
import type { SyncView } from '../../sync/state.ts';
// The console's HTTP client: the documented API, authenticated by the session cookie (same origin).

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
  ) {
    super(detail);
  }
}

let signedOut: () => void = () => {};
/** Called when the server says the session has ended (sign-out elsewhere, idle, key revoked). */
export function onSessionEnded(handler: () => void): void {
  signedOut = handler;
}

export type Query = Record<string, string | number | boolean | null | undefined>;

/** `?a=1&b=2` of the defined, non-empty values. */
export function queryString(query: Query): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined && value !== null && value !== '') params.set(name, String(value));
  const text = params.toString();
  return text ? `?${text}` : '';
}

export async function api<T>(path: string, options: { method?: string; body?: unknown; query?: Query } = {}): Promise<T> {
  const init: RequestInit = { method: options.method ?? 'GET', credentials: 'same-origin', headers: { accept: 'application/json' } };
  if (options.body !== undefined) {
    init.body = JSON.stringify(options.body);
    init.headers = { ...init.headers, 'content-type': 'application/json' };
  }
  const response = await fetch(path + queryString(options.query ?? {}), init).catch(() => {
    throw new ApiFailure(0, 'unreachable', 'svc could not be reached');
  });
  if (response.status === 204) return undefined as T;
  const body = (await response.json().catch(() => null)) as ({ error?: string; detail?: string } & T) | null;
  if (!response.ok) {
    const failure = new ApiFailure(response.status, body?.error ?? 'http_error', body?.detail ?? `HTTP ${response.status}`);
    if (response.status === 401 && path !== '/api/v1/console/session') signedOut();
    throw failure;
  }
  return body as T;
}

/** Scopes of the signed-in key. */
export interface Session {
  key: { id: string; name: string; keyPrefix: string; scopes: string[]; storeId: string | null };
  idleMinutes: number;
}

export const isAdmin = (session: Session) => session.key.scopes.includes('admin');

/**
 * Why the FAQ endpoint would refuse this key from a storefront page, as the end of a sentence
 * ("This key may not be used in a page: …"), or null when it accepts it: products:read alone (the
 * key sits in page source), bound to a store, allowing some host. The server's rule is
 * src/faqs/access.ts (authorizeWidget).
 */
export function widgetKeyProblem(key: Pick<ApiKey, 'scopes' | 'storeId' | 'allowedDomains' | 'revokedAt'>): string | null {
  if (key.revokedAt) return 'it was revoked';
  const broader = key.scopes.filter((scope) => scope !== 'products:read');
  if (broader.length > 0) {
    return `it has more than products:read (${broader.join(', ')}). A snippet puts its key in the page source, where anyone can read it and use those scopes`;
  }
  if (!key.scopes.includes('products:read')) return 'it lacks products:read, the one scope the FAQ endpoint accepts';
  if (key.storeId === null) return 'it is not bound to a store, so it has no FAQs to show';
  if (key.allowedDomains.length === 0) return 'it lists no storefront domains, so it allows no page, not even the preview';
  return null;
}

export const isWidgetKey = (key: Pick<ApiKey, 'scopes' | 'storeId' | 'allowedDomains' | 'revokedAt'>) => widgetKeyProblem(key) === null;

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

// The API's own response types; type-only imports, so no server code reaches the bundle.
/** A store as the admin API shows it, with its catalogue sync state. */
export type Store = StoreResponse<SyncView>;
export type { SyncView };
/** What a store's removal (or disconnect) did: `DELETE /api/v1/admin/stores/:id`. */
export type Removal = RemovalResponse<SyncView>;
export type { StoreHoldings };
export type { ApiKey, Lead };

export const listStores = () => api<{ items: Store[] }>('/api/v1/admin/stores').then((r) => r.items);
export const listKeys = () => api<{ items: ApiKey[] }>('/api/v1/admin/keys').then((r) => r.items);
