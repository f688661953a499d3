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
}

interface Bucket {
  tokens: number;
  updatedAt: number;
}

const WINDOW_MS = 60_000;

/**
 * Token buckets refilled continuously at `capacity` tokens per minute, keyed by an explicit,
 * non-empty key. Memory is bounded by two generations of at most `maxKeys / 2` buckets each: a
 * bucket touched lands in the young one; when it is full, the old generation is dropped whole
 * (O(1), unlike evicting Map entries one by one) and the young one becomes old. A dropped
 * bucket comes back full, which only ever favours a client that has been quiet the longest.
 */
export function createTokenBuckets(clock: Clock, maxKeys: number) {
  const generationSize = Math.max(1, Math.floor(maxKeys / 2));
  let young = new Map<string, Bucket>();
  let old = new Map<string, Bucket>();

  function remember(key: string, bucket: Bucket): void {
    if (!young.has(key) && young.size >= generationSize) {
      old = young;
      young = new Map();
    }
    young.set(key, bucket);
  }

  return {
    /**
     * Take `count` tokens from `key`'s bucket of `capacity`, or none. A `count` above `capacity`
     * can never pass; callers bound their batch sizes by the limit first.
     */
    take(key: string, capacity: number, count = 1): BucketDecision {
      if (key === '') throw new Error('rate-limit bucket key must not be empty');
      const now = clock.now();
      const perMs = capacity / WINDOW_MS;
      const existing = young.get(key) ?? old.get(key);
      let tokens = capacity;
      if (existing) {
        tokens = Math.min(capacity, existing.tokens + Math.max(0, now - existing.updatedAt) * perMs);
        old.delete(key);
      }
      const allowed = tokens >= count;
      if (allowed) tokens -= count;
      remember(key, { tokens, updatedAt: now });
      const missing = allowed ? 0 : Math.min(count, capacity) - tokens;
      return {
        allowed,
        limit: capacity,
        remaining: Math.floor(tokens),
        retryAfterSeconds: Math.ceil(missing / perMs / 1000),
        resetSeconds: Math.ceil((capacity - tokens) / perMs / 1000),
      };
    },

    /** Live buckets; never above `maxKeys`. */
    get size(): number {
      return young.size + old.size;
    },
  };
}

export type TokenBuckets = ReturnType<typeof createTokenBuckets>;
