import type { Clock } from '../lib/clock.ts';

/** Outcome of taking tokens from one bucket; all-or-nothing. */
export interface BucketDecision {
  allowed: boolean;
  /** Bucket capacity: the per-minute limit. */
  limit: number;
  /** Whole tokens left after this decision. */
  remaining: number;
  /** Seconds until the requested tokens are available (0 when allowed). */
  retryAfterSeconds: number;
  /** Seconds until the bucket is full again. */
  resetSeconds: number;
  /** Why a refusal happened: the key's own bucket is short, or the table has no room for a new key. */
  refusedBy?: 'bucket' | 'table-full';
}

interface Bucket {
  key: string;
  tokens: number;
  updatedAt: number;
  capacity: number;
  /** Neighbours in least-recently-used order (`older` of the oldest and `newer` of the newest are null). */
  older: Bucket | null;
  newer: Bucket | null;
}

/** A bucket refills its whole capacity over this window: the capacity is a per-minute limit. */
export const WINDOW_MS = 60_000;
/** How many of the least recently used buckets a new key may look through for a full one to replace. */
const EVICTION_SCAN = 32;

/** Tokens in `bucket` at `now`: refilled continuously at `capacity` per minute, never above it. */
function tokensAt(bucket: Bucket, now: number): number {
  return Math.min(bucket.capacity, bucket.tokens + (Math.max(0, now - bucket.updatedAt) * bucket.capacity) / WINDOW_MS);
}

/**
 * The decision of a take of `count` tokens from a bucket of `capacity` left holding `tokens` (after
 * the take when `allowed`): the same arithmetic for this process's buckets and the shared ones
 * (ratelimit/redis.ts), so a client is answered alike by either.
 */
export function bucketDecision(allowed: boolean, tokens: number, capacity: number, count: number): BucketDecision {
  const perMs = capacity / WINDOW_MS;
  const missing = allowed ? 0 : Math.min(count, capacity) - tokens;
  return {
    allowed,
    limit: capacity,
    remaining: Math.floor(tokens),
    retryAfterSeconds: Math.ceil(missing / perMs / 1000),
    resetSeconds: Math.ceil((capacity - tokens) / perMs / 1000),
    refusedBy: allowed ? undefined : 'bucket',
  };
}

/**
 * Token buckets refilled continuously at `capacity` tokens per minute, keyed by an explicit,
 * non-empty key, at most `maxKeys` of them, kept in least-recently-used order (a linked list beside
 * the Map, so a touch and an eviction are O(1)). A new key may only replace a bucket that is full
 * again: a full bucket is exactly what a new one would be, so forgetting it loses nothing, and no
 * flood of fresh keys can hand a throttled client a fresh bucket. When the oldest few buckets are
 * all below capacity (the table is full of clients spending tokens), the new key is refused instead
 * (`refusedBy: 'table-full'`) until one has refilled; every bucket is full again within a minute.
 */
export function createTokenBuckets(clock: Clock, maxKeys: number) {
  const buckets = new Map<string, Bucket>();
  let oldest: Bucket | null = null;
  let newest: Bucket | null = null;

  function unlink(bucket: Bucket): void {
    if (bucket.older) bucket.older.newer = bucket.newer;
    else oldest = bucket.newer;
    if (bucket.newer) bucket.newer.older = bucket.older;
    else newest = bucket.older;
    bucket.older = bucket.newer = null;
  }

  function append(bucket: Bucket): void {
    bucket.older = newest;
    if (newest) newest.newer = bucket;
    else oldest = bucket;
    newest = bucket;
  }

  /** Forget one full bucket among the least recently used; false when none of them is full. */
  function evictFull(now: number): boolean {
    let bucket = oldest;
    for (let looked = 0; bucket && looked < EVICTION_SCAN; looked++, bucket = bucket.newer) {
      if (tokensAt(bucket, now) >= bucket.capacity) {
        unlink(bucket);
        buckets.delete(bucket.key);
        return true;
      }
    }
    return false;
  }

  /** The refusal for a new key while the table has no room: retry once the oldest bucket is full. */
  function tableFull(now: number, capacity: number): BucketDecision {
    const refillMs = oldest ? ((oldest.capacity - tokensAt(oldest, now)) * WINDOW_MS) / oldest.capacity : 0;
    return { allowed: false, limit: capacity, remaining: 0, retryAfterSeconds: Math.max(1, Math.ceil(refillMs / 1000)), resetSeconds: 0, refusedBy: 'table-full' };
  }

  /**
   * `key`'s bucket refilled to `now` and made the most recently used, or a new full one; null when
   * the key is new and the table has no room for it.
   */
  function bucketAt(key: string, capacity: number, now: number): Bucket | null {
    let bucket = buckets.get(key);
    if (bucket) {
      bucket.tokens = tokensAt(bucket, now);
      if (bucket !== newest) {
        unlink(bucket);
        append(bucket);
      }
    } else {
      if (buckets.size >= maxKeys && !evictFull(now)) return null;
      bucket = { key, tokens: capacity, updatedAt: now, capacity, older: null, newer: null };
      buckets.set(key, bucket);
      append(bucket);
    }
    bucket.capacity = capacity;
    bucket.updatedAt = now;
    return bucket;
  }

  return {
    /**
     * Take `count` tokens from `key`'s bucket of `capacity`, or none. A `count` above `capacity`
     * can never pass; callers bound their batch sizes by the limit first.
     */
    take(key: string, capacity: number, count = 1): BucketDecision {
      if (key === '') throw new Error('rate-limit bucket key must not be empty');
      const now = clock.now();
      const bucket = bucketAt(key, capacity, now);
      if (bucket === null) return tableFull(now, capacity);
      const allowed = bucket.tokens >= count;
      if (allowed) bucket.tokens -= count;
      return bucketDecision(allowed, bucket.tokens, capacity, count);
    },

    /**
     * Sets `key`'s bucket to hold `tokens` now: what the buckets every instance shares last said of
     * it, so a take that falls back here starts from there rather than from a full bucket. A new key
     * takes a place only as a take's would.
     */
    mirror(key: string, capacity: number, tokens: number): void {
      const bucket = bucketAt(key, capacity, clock.now());
      if (bucket !== null) bucket.tokens = Math.min(capacity, tokens);
    },

    /** Give back `count` tokens taken from `key` for a request refused further on (never above capacity). */
    refund(key: string, count: number): void {
      const bucket = buckets.get(key);
      if (bucket) bucket.tokens = Math.min(bucket.capacity, bucket.tokens + count);
    },

    /** Live buckets; never above `maxKeys`. */
    get size(): number {
      return buckets.size;
    },
  };
}

export type TokenBuckets = ReturnType<typeof createTokenBuckets>;
