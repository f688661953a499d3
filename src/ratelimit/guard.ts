import type { RouteLimit } from '../lib/access.ts';
import { rateLimitedError, type TierLimiter } from './tiers.ts';

/** The bucket of a route's limit for a client's address (shared by every route that names it). */
export const routeSubject = (limiter: TierLimiter, ip: string | null, limit: RouteLimit) => limiter.byAddress(limit.tier ?? 'anonymous', ip, limit.bucket);

/**
 * The limit of public, unauthenticated routes (lead sign-up, sign-in, inbound webhooks), as the
 * route declares it (lib/access.ts): one token from the client address's bucket in its tier, keyed
 * apart from scans so one never starves the other, taken on the matched route before its body is
 * read. Throws the 429.
 */
export function takeRouteLimit(limiter: TierLimiter, clientIp: (request: Request) => string | null) {
  return (request: Request, limit: RouteLimit): void => {
    const decision = limiter.take(routeSubject(limiter, clientIp(request), limit));
    if (!decision.allowed) throw rateLimitedError(decision, limit.unit);
  };
}
