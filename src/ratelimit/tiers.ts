import type { Config } from '../config.ts';
import type { Clock } from '../lib/clock.ts';
import { ApiError } from '../lib/errors.ts';
import { createTokenBuckets, type BucketDecision } from './buckets.ts';

/** spec §8: anonymous (keyed by client IP), authed (by lead), agent (by API key). */
export type Tier = 'anonymous' | 'authed' | 'agent';

/** Whose bucket a request draws from. `identity` is never empty. */
export interface RateSubject {
  tier: Tier;
  identity: string;
}

export interface TierDecision extends BucketDecision {
  tier: Tier;
}

/** Upper bound on live buckets across all tiers (about 100 bytes each). */
export const MAX_BUCKETS = 100_000;

/** The anonymous identity of a client: its address, or one shared bucket when the address is unknown. */
export const anonymousSubject = (ip: string | null, scope = 'ip'): RateSubject => ({
  tier: 'anonymous',
  identity: `${scope}:${ip ?? 'unknown'}`,
});

export function createTierLimiter(rates: Config['rates'], clock: Clock, maxKeys = MAX_BUCKETS) {
  const buckets = createTokenBuckets(clock, maxKeys);
  const refused: Record<Tier, number> = { anonymous: 0, authed: 0, agent: 0 };
  return {
    /** Take `count` tokens (all or none) from the subject's bucket; the limit is its tier's per-minute rate. */
    take(subject: RateSubject, count = 1): TierDecision {
      const decision = buckets.take(`${subject.tier}:${subject.identity}`, rates[subject.tier], count);
      if (!decision.allowed) refused[subject.tier]++;
      return { tier: subject.tier, ...decision };
    },
    /** Refused takes per tier since start (for /metrics). */
    refused: refused as Readonly<Record<Tier, number>>,
    get size(): number {
      return buckets.size;
    },
  };
}

export type TierLimiter = ReturnType<typeof createTierLimiter>;

/** The IETF draft pair plus the common RateLimit-Limit/-Remaining/-Reset trio (DESIGN §7). */
export function rateLimitHeaders(decision: TierDecision): Record<string, string> {
  const { tier, limit, remaining, resetSeconds } = decision;
  return {
    'RateLimit-Policy': `"${tier}";q=${limit};w=60`,
    RateLimit: `"${tier}";r=${remaining};t=${resetSeconds}`,
    'RateLimit-Limit': String(limit),
    'RateLimit-Remaining': String(remaining),
    'RateLimit-Reset': String(resetSeconds),
  };
}

/**
 * 429 `{"error":"rate_limited","detail","tier","limit","retryAfter"}` with Retry-After and the rate
 * headers; `unit` names what is counted (scans, or sign-ups on the sign-up route).
 */
export function rateLimitedError(decision: TierDecision, unit = 'scans'): ApiError {
  const { tier, limit, retryAfterSeconds } = decision;
  return new ApiError(
    429,
    'rate_limited',
    `the ${tier} tier allows ${limit} ${unit} per minute; retry in ${retryAfterSeconds} s`,
    { 'Retry-After': String(retryAfterSeconds), ...rateLimitHeaders(decision) },
    { tier, limit, retryAfter: retryAfterSeconds },
  );
}
