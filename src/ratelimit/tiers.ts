import type { Config } from '../config.ts';
import type { Clock } from '../lib/clock.ts';
import { ApiError } from '../lib/errors.ts';
import { addressKey } from '../lib/client-ip.ts';
import { createTokenBuckets, type BucketDecision } from './buckets.ts';

/** spec §8: anonymous (keyed by client IP), authed (by lead), agent (by API key); webhook: inbound deliveries, by source address. */
export type Tier = 'anonymous' | 'authed' | 'agent' | 'webhook';

/** Whose bucket a request draws from. `identity` is never empty. */
export interface RateSubject {
  tier: Tier;
  identity: string;
}

export interface TierDecision extends Omit<BucketDecision, 'refusedBy'> {
  tier: Tier;
  /** Why a refusal happened: the client's bucket, no room for a new client, or the anonymous tier's global ceiling. */
  refusedBy?: BucketDecision['refusedBy'] | 'ceiling';
}

/** The limiter's settings: per-tier rates, the anonymous tier's address keying and ceiling, the table size. */
export type LimiterSettings = Pick<Config, 'rates' | 'anonymousLimits'>;

/** The key of the one bucket every anonymous request also draws from (the tier's global ceiling). */
const ANONYMOUS_CEILING = 'anonymous:*';

/**
 * Buckets every instance shares (Redis, ratelimit/redis.ts). A take of `count` tokens from the
 * client's bucket of `capacity` (and, given `ceiling`, from the tier's ceiling of that capacity) is
 * one atomic step there, all or nothing. It answers null when the store did not answer in time or
 * is unreachable: the take then falls back to this instance's own buckets.
 */
export interface SharedBuckets {
  take(tier: Tier, identity: string, capacity: number, count: number, ceiling: number | null): Promise<Omit<TierDecision, 'tier'> | null>;
  /** Whether takes reach the store now (for /healthz and /metrics). */
  readonly up: boolean;
  /** Takes answered by this instance's own buckets since start, because the store did not answer in time or was unreachable. */
  readonly fallbacks: number;
}

/** Where the limits are kept (for /healthz): this process's buckets, or Redis with whether it answers now. */
export type LimiterBackend = { backend: 'in-process' } | { backend: 'redis'; redis: 'up' | 'down' };

/**
 * The tier limiter: per-tier token buckets in this process, or (given `shared`) in buckets every
 * instance shares, with this process's buckets as the fallback. Without `shared` a take answers at
 * once; with it, a take is a promise (`shared` is then true, so the app can await it).
 */
export function createTierLimiter(settings: LimiterSettings, clock: Clock): TierLimiter<TierDecision>;
export function createTierLimiter(settings: LimiterSettings, clock: Clock, shared: SharedBuckets | null): TierLimiter;
export function createTierLimiter({ rates, anonymousLimits }: LimiterSettings, clock: Clock, shared: SharedBuckets | null = null): TierLimiter {
  const buckets = createTokenBuckets(clock, anonymousLimits.maxBuckets);
  const ceiling = createTokenBuckets(clock, 1);
  const refused: Record<Tier, number> = { anonymous: 0, authed: 0, agent: 0, webhook: 0 };

  /** The decision as the tier's, counted when refused. */
  function decided(tier: Tier, decision: BucketDecision | Omit<TierDecision, 'tier'>): TierDecision {
    if (!decision.allowed) refused[tier]++;
    // Built field by field: a spread of the decision costs a generic property copy per request.
    const { allowed, limit, remaining, retryAfterSeconds, resetSeconds, refusedBy } = decision;
    return { tier, allowed, limit, remaining, retryAfterSeconds, resetSeconds, refusedBy };
  }

  /**
   * Take `count` tokens (all or none) from the subject's bucket in this process; the limit is its
   * tier's per-minute rate. An anonymous take that passes its own bucket also draws from the tier's
   * global ceiling; refused there, its own tokens are given back.
   */
  function takeHere(subject: RateSubject, count = 1): TierDecision {
    const tier = subject.tier;
    const key = `${tier}:${subject.identity}`;
    const own = buckets.take(key, rates[tier], count);
    let decision: BucketDecision | Omit<TierDecision, 'tier'> = own;
    if (own.allowed && tier === 'anonymous') {
      const overall = ceiling.take(ANONYMOUS_CEILING, anonymousLimits.globalPerMinute, count);
      if (!overall.allowed) {
        buckets.refund(key, count);
        decision = { ...overall, refusedBy: 'ceiling' };
      }
    }
    return decided(tier, decision);
  }

  /**
   * The same take in the shared buckets (client and ceiling in one atomic step); here when they do
   * not answer in time. What they answer of the client's bucket is kept in this process's, so a take
   * that falls back starts from the client's last known level, not from a full bucket.
   */
  async function takeShared(subject: RateSubject, count = 1): Promise<TierDecision> {
    const tier = subject.tier;
    const answer = await shared!.take(tier, subject.identity, rates[tier], count, tier === 'anonymous' ? anonymousLimits.globalPerMinute : null);
    if (answer === null) return takeHere(subject, count);
    if (answer.refusedBy !== 'ceiling') buckets.mirror(`${tier}:${subject.identity}`, rates[tier], answer.remaining);
    return decided(tier, answer);
  }

  return {
    /**
     * The anonymous identity of a client within `scope`: its IPv4 address, or its IPv6 network of
     * SVC_RATE_IPV6_PREFIX bits (so rotating addresses inside a /64 shares one bucket), or one
     * shared bucket when the address is unknown.
     */
    anonymous(ip: string | null, scope = 'ip'): RateSubject {
      return this.byAddress('anonymous', ip, scope);
    },
    /** A client keyed by its address (as `anonymous`) in a tier that counts addresses. */
    byAddress(tier: 'anonymous' | 'webhook', ip: string | null, scope: string): RateSubject {
      return { tier, identity: `${scope}:${ip === null ? 'unknown' : addressKey(ip, anonymousLimits.ipv6PrefixBits)}` };
    },
    take: shared ? takeShared : takeHere,
    shared: shared !== null,
    /** Refused takes per tier since start (for /metrics). */
    refused: refused as Readonly<Record<Tier, number>>,
    get size(): number {
      return buckets.size;
    },
    backend: (): LimiterBackend => (shared ? { backend: 'redis', redis: shared.up ? 'up' : 'down' } : { backend: 'in-process' }),
  };
}

/** A tier limiter whose takes answer with `Taken`: a decision at once (this process's buckets), or a promise of one (shared buckets). */
export interface TierLimiter<Taken extends TierDecision | Promise<TierDecision> = TierDecision | Promise<TierDecision>> {
  anonymous(ip: string | null, scope?: string): RateSubject;
  byAddress(tier: 'anonymous' | 'webhook', ip: string | null, scope: string): RateSubject;
  take(subject: RateSubject, count?: number): Taken;
  /** True when takes go to shared buckets (and so answer with a promise). */
  readonly shared: boolean;
  readonly refused: Readonly<Record<Tier, number>>;
  /** Live buckets in this process (the fallback's, with shared buckets). */
  readonly size: number;
  /** Where the limits are kept, and whether Redis answers (for /healthz). */
  backend(): LimiterBackend;
}

/** The IETF draft pair plus the common RateLimit-Limit/-Remaining/-Reset trio (DESIGN §7). */
export function rateLimitHeaders(decision: TierDecision): Record<string, string> {
  return putRateLimitHeaders({}, decision);
}

/** `rateLimitHeaders` written into `headers` (a route's response headers), with no object in between. */
export function putRateLimitHeaders<Target extends Record<string, string | number>>(headers: Target, decision: TierDecision): Target {
  const { tier, limit, remaining, resetSeconds } = decision;
  const target = headers as Record<string, string | number>;
  target['RateLimit-Policy'] = `"${tier}";q=${limit};w=60`;
  target.RateLimit = `"${tier}";r=${remaining};t=${resetSeconds}`;
  target['RateLimit-Limit'] = String(limit);
  target['RateLimit-Remaining'] = String(remaining);
  target['RateLimit-Reset'] = String(resetSeconds);
  return headers;
}

/**
 * 429 `{"error":"rate_limited","detail","tier","limit","retryAfter"}` with Retry-After and the rate
 * headers; `unit` names what is counted (scans, or sign-ups on the sign-up route), and the detail
 * says which limit refused (the client's bucket, the full table, or the tier's global ceiling).
 */
export function rateLimitedError(decision: TierDecision, unit = 'scans'): ApiError {
  const { tier, limit, retryAfterSeconds, refusedBy } = decision;
  const why =
    refusedBy === 'ceiling'
      ? `all ${tier} clients together may make ${limit} ${unit} per minute`
      : refusedBy === 'table-full'
        ? 'too many clients are rate limited at once for a new one to be tracked'
        : `the ${tier} tier allows ${limit} ${unit} per minute`;
  return new ApiError(
    429,
    'rate_limited',
    `${why}; retry in ${retryAfterSeconds} s`,
    { 'Retry-After': String(retryAfterSeconds), ...rateLimitHeaders(decision) },
    { tier, limit, retryAfter: retryAfterSeconds },
  );
}
