import type { EntityContext, EntityType } from './context.ts';

/** Platform B's storefront page-data global; the spec's `bc-window` method reads it. */
const PLATFORM_B_GLOBAL = 'BCData';
export const PLATFORM_B_RETRIES = 3;
export const PLATFORM_B_RETRY_DELAY_MS = 500;

const ENTITY_TYPES: readonly string[] = ['product', 'category', 'page'];
const MAX_ID_LENGTH = 255;

interface DetectEnv {
  document: Document;
  window: Window;
  script: HTMLScriptElement | null;
  wait(ms: number): Promise<void>;
}

const found = (type: EntityType, id: string | null | undefined, method: string): EntityContext | null => {
  const value = id == null ? '' : String(id).trim();
  return value && value.length <= MAX_ID_LENGTH ? { type, id: value, method } : null;
};

/** 1. `data-entity-type` + `data-entity-id` on the script tag. */
export function fromExplicit(script: HTMLScriptElement | null): EntityContext | null {
  const type = script?.getAttribute('data-entity-type')?.trim().toLowerCase();
  if (!type || !ENTITY_TYPES.includes(type)) return null;
  return found(type as EntityType, script?.getAttribute('data-entity-id'), 'explicit');
}

type PlatformBGlobal = { product_attributes?: { product_id?: unknown } } | undefined;

function platformBGlobal(win: Window): PlatformBGlobal {
  return (win as unknown as Record<string, PlatformBGlobal>)[PLATFORM_B_GLOBAL];
}

/** 2. Platform B: the page-data global, then product and category containers. */
export function fromPlatformB(doc: Document, win: Window): EntityContext | null {
  const productId = platformBGlobal(win)?.product_attributes?.product_id;
  if (typeof productId === 'number' || typeof productId === 'string') return found('product', String(productId), 'bc-window');
  return (
    found('product', doc.querySelector('[data-product-id]')?.getAttribute('data-product-id'), 'bc-product-attr') ??
    found('category', doc.querySelector('[data-category-id]')?.getAttribute('data-category-id'), 'bc-category-attr')
  );
}

/** 3. OpenGraph: `og:type` = product with `product:retailer_item_id`. */
export function fromOpenGraph(doc: Document): EntityContext | null {
  const meta = (property: string) => doc.querySelector(`meta[property="${property}"]`)?.getAttribute('content')?.trim();
  if (meta('og:type')?.toLowerCase() !== 'product') return null;
  return found('product', meta('product:retailer_item_id'), 'og-meta');
}

// Optional locale prefix (/fr, /en-gb) as storefronts with several markets use.
const LOCALE = '(?:/[a-z]{2}(?:-[a-z]{2})?)?';
const URL_PATTERNS: [RegExp, EntityType][] = [
  [new RegExp(`^${LOCALE}(?:/collections/[^/]+)?/products/([^/]+)/?$`, 'i'), 'product'],
  [new RegExp(`^${LOCALE}/product/([^/]+)/?$`, 'i'), 'product'],
  [new RegExp(`^${LOCALE}/collections/([^/]+)/?$`, 'i'), 'category'],
  [new RegExp(`^${LOCALE}/categor(?:y|ies)/([^/]+)/?$`, 'i'), 'category'],
  [new RegExp(`^${LOCALE}/pages/([^/]+)/?$`, 'i'), 'page'],
];

/** 4a. Platform C: body classes `single-product` and `postid-N` (checked before paths, see README). */
export function fromBodyClass(doc: Document): EntityContext | null {
  const classes = doc.body?.classList;
  if (!classes?.contains('single-product')) return null;
  const postId = [...classes].map((c) => /^postid-(\d+)$/.exec(c)?.[1]).find(Boolean);
  return found('product', postId, 'body-class');
}

/** 4b. URL paths of platforms A and B. */
export function fromUrlPath(pathname: string): EntityContext | null {
  for (const [pattern, type] of URL_PATTERNS) {
    const handle = pattern.exec(pathname)?.[1];
    if (!handle) continue;
    try {
      return found(type, decodeURIComponent(handle), 'url-path');
    } catch {
      return null;
    }
  }
  return null;
}

/**
 * Detect the entity in the spec's priority order. While platform B's global is not populated (themes
 * may fill it after the document is parsed) and no platform-B container matched, the platform-B step
 * is retried up to 3 times, 500 ms apart, before falling through to the later sources.
 */
export async function detectContext(env: DetectEnv): Promise<EntityContext | null> {
  const explicit = fromExplicit(env.script);
  if (explicit) return explicit;
  for (let attempt = 0; ; attempt++) {
    const platformB = fromPlatformB(env.document, env.window);
    if (platformB) return platformB;
    if (attempt >= PLATFORM_B_RETRIES) break;
    await env.wait(PLATFORM_B_RETRY_DELAY_MS);
  }
  return fromOpenGraph(env.document) ?? fromBodyClass(env.document) ?? fromUrlPath(env.window.location.pathname);
}
