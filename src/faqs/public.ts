import type { ApiKey, KeyStore } from '../auth/keys.ts';
import type { StoreRecord } from '../stores/registry.ts';
import type { EntityRefs } from '../catalog/entries.ts';
import { FAQ_ENTITY_TYPES, type FaqEntityType } from './types.ts';
import { ApiError } from '../lib/errors.ts';
import { etagOf } from '../lib/http-cache.ts';
import { andThen, type MaybePromise } from '../lib/maybe-promise.ts';
import { authorizeWidget, hostAllowed, hostOf } from './access.ts';
import type { FaqRecords } from '../storage/content.ts';
import type { Immediate } from '../storage/synchronous.ts';

export interface PublicFaqDeps {
  /** At once where the engine can (SQLite), as `catalog`'s: this hot GET then answers without a promise (test/hot-paths.test.ts). */
  faqs: Pick<Immediate<FaqRecords>, 'approved'>;
  keys: KeyStore;
  /** The ids and handles a product, category or page goes by: FAQs are found under either. */
  catalog: EntityRefs;
  storeOf: (id: string) => MaybePromise<StoreRecord | null>;
  /** Moves on any commit: a cached answer is served only while it holds still. */
  changeStamp: () => number;
  /** True when a page served by svc itself made the request (the console's widget preview). */
  isOwnPage: (request: Request) => boolean;
}

/** One answer to one verified origin; the same object while it is served from the cache (so its response headers can be built once). */
export interface PublicFaqAnswer {
  /** The JSON as UTF-8 bytes, encoded once. */
  body: Blob;
  etag: string;
  /** The verified Origin to echo in Access-Control-Allow-Origin (null when the Referer was used). */
  origin: string | null;
}

interface CacheEntry {
  dbStamp: number;
  /** The widget key's id: an answer served from here is still a use of the key (its last use is shown to the operator). */
  keyId: string;
  allowedDomains: string[];
  /** The answers to origins already found in allowedDomains (a few, so a page's repeat calls skip parsing its Origin). */
  origins: Map<string, PublicFaqAnswer>;
  body: Blob;
  etag: string;
}

/** Verified origins remembered per cached answer. */
const ORIGINS_PER_ANSWER = 8;

/**
 * Longest Origin remembered as verified: a browser's is `scheme://host[:port]` (a host name is at
 * most 253 characters); a longer one with an allowed host is still answered, only not remembered.
 */
const REMEMBERED_ORIGIN_CHARS = 300;

/** Answers cached per (key, query), at most this many: both come from clients. */
const CACHE_LIMIT = 1000;

/**
 * Longest query (from `?`) whose answer is cached: a widget's is `?type=…&ref=…`, its ref at most
 * 255 characters (765 percent-encoded); a longer one is answered, only not kept.
 */
const CACHED_QUERY_CHARS = 1024;

function entityOf(url: URL, fail: (status: number, code: string, detail: string) => ApiError): { type: FaqEntityType; ref: string } {
  const type = url.searchParams.get('type') ?? '';
  const ref = url.searchParams.get('ref') ?? '';
  if (!(FAQ_ENTITY_TYPES as readonly string[]).includes(type)) throw fail(400, 'invalid_request', `type: must be one of ${FAQ_ENTITY_TYPES.join(', ')}`);
  if (ref.length === 0 || ref.length > 255) throw fail(400, 'invalid_request', 'ref: between 1 and 255 characters');
  return { type: type as FaqEntityType, ref };
}

/**
 * The widget's FAQ read: key and origin checks (access.ts), then the approved entries of the entity
 * in the key's store. A verified answer is reused while the database is unchanged (any write,
 * such as a key revocation or an FAQ edit, revalidates it); the origin is still checked every time.
 *
 * Answers are cached by the widget key as sent (trimmed) and the query as sent, with no hash of the
 * key per request. Only keys that passed `authorizeWidget` are ever kept: products:read and no
 * other scope, bound to a store, with allowedDomains, that is keys made to be published in a
 * storefront's page source. Any other key, or a guess, is refused before anything is kept, and is
 * verified by its SHA-256 as everywhere else (auth/keys.ts), so neither the cache nor the timing of
 * its lookup holds or tells anything not already public.
 */
export function createPublicFaqs({ faqs, keys, catalog, storeOf, changeStamp, isOwnPage }: PublicFaqDeps) {
  const cache = new Map<string, CacheEntry>();
  // The last answer served from the cache to a verified origin, under the key it was asked with (a
  // map of one entry: the key is found by hash as in the cache, never compared by hand), with the
  // URL, Origin and stamp it was asked with: a page asking again with all four unchanged gets it
  // without a joined cache key (built, hashed, looked up) or a lookup of its origin.
  const last = new Map<string, { url: string; origin: string; dbStamp: number; keyId: string; answer: PublicFaqAnswer }>();

  return {
    /** The answer: at once, unless the widget key must be looked up in storage (a promise then). */
    answer(request: Request): MaybePromise<PublicFaqAnswer> {
      const raw = request.headers.get('x-api-key');
      const dbStamp = changeStamp();
      // The query as sent names the entity (other spellings of it get entries of their own).
      const url = request.url;
      const origin = request.headers.get('origin');
      const repeat = raw === null ? undefined : last.get(raw);
      if (repeat !== undefined && repeat.dbStamp === dbStamp && repeat.url === url && repeat.origin === origin) {
        keys.used(repeat.keyId);
        return repeat.answer;
      }
      const query = url.indexOf('?');
      const cacheKey = raw ? `${raw.trim()}\n${query === -1 ? '' : url.slice(query)}` : null;
      const cached = cacheKey === null ? undefined : cache.get(cacheKey);
      if (cached?.dbStamp === dbStamp) {
        const known = origin !== null ? cached.origins.get(origin) : undefined;
        if (known !== undefined) {
          keys.used(cached.keyId);
          last.clear();
          last.set(raw!, { url, origin: origin!, dbStamp, keyId: cached.keyId, answer: known });
          return known;
        }
        const host = origin !== null ? hostOf(origin) : hostOf(request.headers.get('referer'));
        if (host !== null && hostAllowed(host, cached.allowedDomains)) {
          keys.used(cached.keyId);
          const answer = { body: cached.body, etag: cached.etag, origin };
          if (origin !== null && origin.length <= REMEMBERED_ORIGIN_CHARS && cached.origins.size < ORIGINS_PER_ANSWER) cached.origins.set(origin, answer);
          return answer;
        }
      }

      const entityUrl = new URL(url);
      // The origin it verifies is the request's Origin, read above.
      const verified = authorizeWidget(keys, request.headers, isOwnPage(request));
      return verified instanceof Promise ? verified.then(answerFor) : answerFor(verified);

      function answerFor(key: ApiKey & { storeId: string }): MaybePromise<PublicFaqAnswer> {
        // From here the caller is verified, so its errors may be read cross-origin.
        const fail = (status: number, code: string, detail: string) => new ApiError(status, code, detail, origin ? { 'Access-Control-Allow-Origin': origin } : {});
        const { type, ref } = entityOf(entityUrl, fail);
        return andThen(storeOf(key.storeId), (store) => {
          if (store?.signalsWithdrawnAt) throw fail(410, 'signals_withdrawn', 'the store uninstalled svc or was disconnected; its content is withdrawn');
          if (!store || store.status !== 'active') throw fail(404, 'not_found', 'the store of this key is not active');
          return andThen(catalog.refsOf(store.id, type, ref), (refs) => andThen(faqs.approved(store.id, type, refs), (items) => answered(key, JSON.stringify({ entity: { type, ref }, items }))));
        });
      }

      function answered(key: ApiKey, json: string): PublicFaqAnswer {
        const etag = etagOf(json);
        const body = new Blob([json]);
        cache.delete(cacheKey!);
        // Kept only when nothing was committed while storage answered: the answer may predate that commit.
        if ((query === -1 || url.length - query <= CACHED_QUERY_CHARS) && changeStamp() === dbStamp) {
          if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value!);
          cache.set(cacheKey!, { dbStamp, keyId: key.id, allowedDomains: key.allowedDomains, origins: new Map(), body, etag });
        }
        return { body, etag, origin };
      }
    },
  };
}

export type PublicFaqs = ReturnType<typeof createPublicFaqs>;
