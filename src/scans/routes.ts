import { Elysia } from 'elysia';
import { orNotFound } from '../lib/errors.ts';
import { etagOf, matchesIfNoneMatch } from '../lib/http-cache.ts';
import { normalizeHostname } from '../lib/hostname.ts';
import { syncRoute } from '../lib/sync-route.ts';
import { answerInit, appRoute, plainResponse, type AnswerInit, type HotRoute, type Respond } from '../lib/hot-route.ts';
import { andThen, type MaybePromise } from '../lib/maybe-promise.ts';
import { memoUntilChange } from '../lib/memo-until-change.ts';
import { badgeFor, badgeJson, badgeSvg } from './badge.ts';
import type { BadgeScan, DashboardQueries } from '../storage/scans.ts';
import {
  badParameter,
  encodeCursor,
  FILTER_PARAMS,
  parseCursor,
  parseFilters,
  parseGroupBy,
  parseLimit,
  queryParams,
} from './filters.ts';
import type { BacklogView } from './backlog.ts';
import { scanDocs as docs } from './docs.ts';

/** Top hostnames: 10 unless `limit` says otherwise (at most 100). */
const TOP_HOSTNAMES = { fallback: 10, max: 100 };

/** Shields' endpoint caching (DESIGN §7): badges may be five minutes stale at browsers and CDNs. */
const BADGE_CACHE = 'max-age=300, s-maxage=300';

/**
 * The scan a hostname's badge shows (ScanReadRecords.badge, answered at once where the engine can:
 * the badge is a hot GET, answered without a promise on SQLite).
 */
export type BadgeLookup = (hostname: string) => MaybePromise<BadgeScan | null>;

/** Badge answers kept between commits, one per URL as sent (URLs come from clients). */
const BADGE_ANSWERS = 1000;

/** A badge answer: its bytes, validator, status and response headers (with and without Content-Type, for 200 and 304). */
interface BadgeAnswer {
  body: Blob;
  etag: string;
  ok: AnswerInit;
  notModified: AnswerInit;
}

/** The public badge of a hostname's latest scan: SVG (default) or the shields endpoint JSON. */
function badgeAnswer(url: string, latestOf: BadgeLookup): MaybePromise<BadgeAnswer> {
  const params = queryParams(url, ['domain', 'format']);
  const domainParam = params.get('domain');
  if (domainParam === undefined) throw badParameter('domain', 'required, the host name of the site (domain=shop.example.com)');
  const domain = normalizeHostname(domainParam);
  if (domain === null) throw badParameter('domain', 'expected a bare host name such as shop.example.com');
  const format = params.get('format') ?? 'svg';
  if (format !== 'svg' && format !== 'json') throw badParameter('format', 'expected svg or json');

  return andThen(latestOf(domain), (latest) => {
    const badge = badgeFor(latest);
    const body = format === 'svg' ? badgeSvg(badge) : JSON.stringify(badgeJson(badge));
    const etag = etagOf(body);
    const headers = { 'Cache-Control': BADGE_CACHE, ETag: etag };
    const type = format === 'svg' ? 'image/svg+xml; charset=utf-8' : 'application/json;charset=utf-8';
    return { body: new Blob([body]), etag, notModified: answerInit(304, headers), ok: answerInit(200, { ...headers, 'Content-Type': type }) };
  });
}

/**
 * GET /api/v1/public/probe/badge. A badge changes only with a commit (a new scan), so each URL's
 * whole answer is kept until the database changes (`changeStamp`, moved by any process's commit).
 * An answer that waits for storage is a promise that may reject: compose the route with
 * answeringLateErrors (src/lib/hot-route.ts).
 */
export function badgeRoute(latestOf: BadgeLookup, changeStamp: () => number): HotRoute {
  const answerOf = memoUntilChange(changeStamp, BADGE_ANSWERS, (url) => badgeAnswer(url, latestOf));
  const reply = (request: Request, badge: BadgeAnswer, respond: Respond) =>
    matchesIfNoneMatch(request, badge.etag) ? respond(null, badge.notModified) : respond(badge.body, badge.ok);
  const answer = (request: Request, _params: unknown, respond: Respond) => {
    const badge = answerOf(request.url);
    // `respond` serves the request in hand only while the answer runs: a late one is built plainly.
    return badge instanceof Promise ? badge.then((late) => reply(request, late, plainResponse)) : reply(request, badge, respond);
  };
  return { path: '/api/v1/public/probe/badge', answer };
}

export function badgeRoutes(badge: HotRoute) {
  return new Elysia({ name: 'badge' }).get(badge.path, appRoute(badge), { detail: docs.badge });
}

/**
 * Dashboard read endpoints (DESIGN §5), for `dashboard:read` (or `admin`), as each route declares
 * (its apiDoc). `rollupBacklog` is the backlog now, as the API shows it (src/scans/backlog.ts).
 */
export function dashboardRoutes(reader: DashboardQueries, rollupBacklog: () => MaybePromise<BacklogView>) {
  return new Elysia({ name: 'dashboard', prefix: '/api/v1/dashboard' })
    .get('/scans', async ({ request }) => {
      const params = queryParams(request.url, [...FILTER_PARAMS, 'cursor', 'limit']);
      const page = await reader.list(parseFilters(params), parseCursor(params.get('cursor')), parseLimit(params.get('limit')));
      return { items: page.items, nextCursor: page.next ? encodeCursor(page.next) : null };
    }, { detail: docs.scans })
    .get('/scans/:id', async ({ params }) => orNotFound(await reader.get(params.id), 'scan', params.id), { detail: docs.scan })
    .get('/hostnames', async ({ request }) => {
      const params = queryParams(request.url, [...FILTER_PARAMS, 'limit']);
      return { items: await reader.topHostnames(parseFilters(params), parseLimit(params.get('limit'), TOP_HOSTNAMES)) };
    }, { detail: docs.hostnames })
    .get('/stats', async ({ request }) => {
      const params = queryParams(request.url, [...FILTER_PARAMS, 'groupBy']);
      const groupBy = parseGroupBy(params.get('groupBy'));
      return { groupBy, groups: await reader.stats(parseFilters(params), groupBy) };
    }, { detail: docs.stats })
    .get('/rollup-backlog', () => rollupBacklog(), { detail: docs.rollupBacklog });
}
