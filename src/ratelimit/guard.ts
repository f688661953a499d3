import { rateLimitedError, type TierLimiter } from './tiers.ts';
import { canonicalPath } from '../lib/request-path.ts';

export interface LimitedRoute {
  method: string;
  path: string;
  /** What the 429 says is counted, e.g. "sign-ups". */
  unit: string;
  /** The tier counted in (default anonymous); webhook deliveries have a rate of their own. */
  tier?: 'anonymous' | 'webhook';
  /** Routes naming the same bucket share it (default: a bucket per route). */
  bucket?: string;
}

/** The bucket of one public route for a client's address (shared by every way of calling that route). */
export const routeSubject = (limiter: TierLimiter, ip: string | null, route: LimitedRoute) =>
  limiter.byAddress(route.tier ?? 'anonymous', ip, route.bucket ?? `${route.method} ${route.path}`);

/**
 * Request gate check (src/app.ts, before routing) for public, unauthenticated routes (lead sign-up, sign-in, inbound
 * webhooks): each listed route draws from the client address's bucket in its tier, keyed apart from
 * scans so one never starves the other, before the body is read.
 */
export function anonymousRouteLimit(limiter: TierLimiter, clientIp: (request: Request) => string | null, routes: LimitedRoute[]) {
  return ({ request }: { request: Request }): Response | undefined => {
    const method = request.method;
    const pathname = canonicalPath(request);
    const route = routes.find((r) => r.method === method && r.path === pathname);
    if (!route) return undefined;
    const decision = limiter.take(routeSubject(limiter, clientIp(request), route));
    return decision.allowed ? undefined : rateLimitedError(decision, route.unit).toResponse();
  };
}
