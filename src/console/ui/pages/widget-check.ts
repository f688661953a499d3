import { widgetKeyProblem, type ApiKey, type Store } from '../api.ts';
import { BASE } from '../router.ts';

// What the widget builder tells the operator before a snippet leaves the page: whether a pasted key
// may sit in a storefront's page source, and why the preview shows what it shows.

/** A whole `sk_live_` key as svc makes them (src/auth/keys.ts). */
const RAW_KEY = /^sk_live_[A-Za-z0-9_-]{43}$/;

export type KeyVerdict = { usable: true; key: ApiKey } | { usable: false; reason: string } | null;

const nameOf = (key: ApiKey) => `“${key.name || 'unnamed'}” (${key.keyPrefix}…)`;

/**
 * Judges a pasted key by the key list: the key's first characters are its `keyPrefix`, which names
 * it without the secret. Null for an empty field. A key the page cannot identify is refused too:
 * the snippet never carries a key nobody has checked.
 */
export function judgePastedKey(pasted: string, keys: readonly ApiKey[]): KeyVerdict {
  const text = pasted.trim();
  if (text === '') return null;
  if (!RAW_KEY.test(text)) return { usable: false, reason: 'This is not a whole svc key: a key is sk_live_ and 43 more characters. Paste it again, or create a widget key.' };
  const named = keys.filter((key) => key.keyPrefix === text.slice(0, key.keyPrefix.length));
  const live = named.filter((key) => !key.revokedAt);
  if (named.length === 0) return { usable: false, reason: `No key of this svc starts with ${text.slice(0, 12)}…: the key is mistyped or belongs to another svc.` };
  if (live.length === 0) return { usable: false, reason: `This key ${nameOf(named[0]!)} was revoked. Create a widget key.` };
  if (live.length > 1) return { usable: false, reason: `${live.length} keys start with ${live[0]!.keyPrefix}…, so the page cannot tell which one this is. Create a widget key.` };
  const key = live[0]!;
  const problem = widgetKeyProblem(key);
  if (problem) return { usable: false, reason: `This key ${nameOf(key)} may not be used in a page: ${problem}. Create a widget key for the store instead.` };
  return { usable: true, key };
}

export interface Explanation {
  tone: 'ok' | 'warn' | 'error';
  text: string;
  /** A console page that fixes it, with its link text. */
  link?: { href: string; text: string };
}

export interface PreviewSubject {
  key: ApiKey;
  store: Store | null;
  entity: { type: string; id: string };
}

/**
 * Asks the FAQ endpoint what the widget in the preview gets (the same request /embed.js sends from
 * the preview page: svc's own page, with the key) and says in words why the preview shows what it
 * shows, a blank one above all.
 */
export async function explainPreview({ key, store, entity }: PreviewSubject, rawKey: string): Promise<Explanation> {
  const what = `${entity.type} “${entity.id}”`;
  let response: Response;
  try {
    response = await fetch(`/api/v1/public/faqs?type=${encodeURIComponent(entity.type)}&ref=${encodeURIComponent(entity.id)}`, { headers: { 'X-Api-Key': rawKey }, credentials: 'omit' });
  } catch {
    return { tone: 'error', text: 'svc did not answer the widget’s FAQ request, so the preview stays blank. Check that svc is running and reload.' };
  }
  const body = (await response.json().catch(() => null)) as { items?: unknown[]; error?: string; detail?: string } | null;
  if (response.ok) {
    const count = body?.items?.length ?? 0;
    if (count > 0) return { tone: 'ok', text: `The widget shows ${count} approved FAQ${count === 1 ? '' : 's'} for ${what}.` };
    return {
      tone: 'warn',
      text: `The preview is blank: there are no approved FAQs for ${what}${store ? ` in ${store.domain}` : ''}. Approve some in FAQs, or preview another ${entity.type}.`,
      link: { href: `${BASE}/faqs?store=${encodeURIComponent(key.storeId ?? '')}&type=${encodeURIComponent(entity.type)}&ref=${encodeURIComponent(entity.id)}`, text: `FAQs of ${what}` },
    };
  }
  const blank = 'The preview is blank: ';
  switch (body?.error) {
    case 'key_too_broad':
      return { tone: 'error', text: `${blank}this key may not be used in a page: it has more than products:read.` };
    case 'insufficient_scope':
      return { tone: 'error', text: `${blank}this key lacks products:read.` };
    case 'key_not_bound':
      return { tone: 'error', text: `${blank}this key is not bound to a store.` };
    case 'invalid_api_key':
      return { tone: 'error', text: `${blank}svc no longer knows this key (revoked?). Create a widget key.` };
    case 'origin_not_allowed':
      return key.allowedDomains.length === 0
        ? { tone: 'error', text: `${blank}this key lists no storefront domains, so it allows no page, not even the preview.` }
        : { tone: 'error', text: `${blank}svc does not count this console’s address (${location.origin}) as its own, so the key’s domain check applies to the preview. Open the console at svc’s base URL, or set --base-url to the address you use.` };
    case 'not_found':
      return { tone: 'error', text: `${blank}the key’s store${store ? ` ${store.domain}` : ''} is not active, so it serves no FAQs.` };
    case 'signals_withdrawn':
      return { tone: 'error', text: `${blank}the key’s store${store ? ` ${store.domain}` : ''} uninstalled svc; its FAQs are withdrawn.` };
    case 'invalid_request':
      return { tone: 'error', text: `${blank}svc refused the entity (${body.detail ?? 'invalid'}).` };
    default:
      return { tone: 'error', text: `${blank}the FAQ request failed (${response.status}${body?.error ? ` ${body.error}` : ''}).` };
  }
}
