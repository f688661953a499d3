import type { RouteLimit } from '../lib/access.ts';
import { rateLimitedError, type TierDecision, type TierLimiter } from './tiers.ts';

/** The bucket of a route's limit for a client's address (shared by every route that names it). */
export const routeSubject = (limiter: TierLimiter, ip: string | null, limit: RouteLimit) => limiter.byAddress(limit.tier ?? 'anonymous', ip, limit.bucket);

/**
 * The limit of public, unauthenticated routes (lead sign-up, sign-in, inbound webhooks), as the
 * route declares it (lib/access.ts): one token from the client address's bucket in its tier, keyed
 * apart from scans so one never starves the other, taken on the matched route before its body is
 * read. Throws the 429; with shared buckets (Redis) the take is a promise, which rejects with it.
 */
export function takeRouteLimit(limiter: TierLimiter, clientIp: (request: Request) => string | null) {
  return (request: Request, limit: RouteLimit): void | Promise<void> => {
    const decision = limiter.take(routeSubject(limiter, clientIp(request), limit));
    if (decision instanceof Promise) return decision.then((taken) => refuseOverLimit(taken, limit));
    refuseOverLimit(decision, limit);
  };
}

function refuseOverLimit(decision: TierDecision, limit: RouteLimit): void {
  if (!decision.allowed) throw rateLimitedError(decision, limit.unit);
}
