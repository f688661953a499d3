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
 * non-empty key. The map is bounded: past `maxKeys` the least recently used bucket is dropped
 * (a dropped bucket comes back full, which only ever favours a client that has been quiet the
 * longest), so a flood of distinct keys cannot grow memory.
 */
export function createTokenBuckets(clock: Clock, maxKeys: number) {
  // Map iteration order is insertion order: re-inserting on every touch makes the first key the LRU.
  const buckets = new Map<string, Bucket>();

  return {
    /**
     * Take `count` tokens from `key`'s bucket of `capacity`, or none. A `count` above `capacity`
     * can never pass; callers bound their batch sizes by the limit first.
     */
    take(key: string, capacity: number, count = 1): BucketDecision {
      if (key === '') throw new Error('rate-limit bucket key must not be empty');
      const now = clock.now();
      const perMs = capacity / WINDOW_MS;
      const existing = buckets.get(key);
      let tokens = capacity;
      if (existing) {
        tokens = Math.min(capacity, existing.tokens + Math.max(0, now - existing.updatedAt) * perMs);
        buckets.delete(key);
      } else if (buckets.size >= maxKeys) {
        buckets.delete(buckets.keys().next().value!);
      }
      const allowed = tokens >= count;
      if (allowed) tokens -= count;
      buckets.set(key, { tokens, updatedAt: now });
      const missing = allowed ? 0 : Math.min(count, capacity) - tokens;
      return {
        allowed,
        limit: capacity,
        remaining: Math.floor(tokens),
        retryAfterSeconds: Math.ceil(missing / perMs / 1000),
        resetSeconds: Math.ceil((capacity - tokens) / perMs / 1000),
      };
    },

    get size(): number {
      return buckets.size;
    },
  };
}

export type TokenBuckets = ReturnType<typeof createTokenBuckets>;
