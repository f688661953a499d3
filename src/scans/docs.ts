import { t } from 'elysia';
import { GRADES, PAGE_TYPES, SCAN_PLATFORMS } from './vocabulary.ts';
import { apiDoc, integer, isoTime, nullable, page, type Input } from '../lib/api-doc.ts';
import { GROUP_BYS } from './filters.ts';
import { NOTICEABLE_BACKLOG } from './backlog.ts';

// OpenAPI descriptions of the badge and dashboard routes (src/scans/routes.ts).

const filters: Input[] = [
  { name: 'hostname', in: 'query', description: 'Only this host name', schema: t.String() },
  { name: 'country', in: 'query', description: 'ISO 3166-1 alpha-2 code, any case', schema: t.String({ pattern: '^[A-Za-z]{2}$' }) },
  { name: 'platform', in: 'query', description: 'Detected platform', schema: t.String({ enum: [...SCAN_PLATFORMS] }) },
  { name: 'pageType', in: 'query', description: 'Page type', schema: t.String({ enum: [...PAGE_TYPES] }) },
  { name: 'grade', in: 'query', description: 'Grade', schema: t.String({ enum: [...GRADES] }) },
  { name: 'from', in: 'query', description: 'Scanned at or after: ISO-8601 with a zone, or a UTC date YYYY-MM-DD', schema: t.String() },
  { name: 'to', in: 'query', description: 'Scanned before (exclusive), same forms as `from`', schema: t.String() },
];
const limit = (max: number, fallback: number): Input => ({ name: 'limit', in: 'query', description: `How many, 1 to ${max} (default ${fallback})`, schema: integer({ minimum: 1, maximum: max }) });
const presence = t.Record(t.String(), nullable(t.Boolean()), { description: 'Per presence key (docs/telemetry.md): reported present, absent, or null when not reported' });

const scanSummary = t.Object({
  id: t.String(),
  hostname: t.String(),
  url: t.String(),
  scannedAt: isoTime(),
  receivedAt: isoTime(),
  country: nullable(t.String()),
  platform: nullable(t.Object({ platform: t.String(), confidence: nullable(t.Number()) })),
  pageType: nullable(t.String()),
  grade: t.String(),
  percentage: t.Number(),
  svc: t.Object({ detected: nullable(t.Boolean()), version: nullable(t.String()) }),
  vertical: nullable(t.String()),
  signalPresence: presence,
});
const summaryExample = {
  id: 'scan_01JD8M1N2P3Q4R5S6T7V8W9X0Y',
  hostname: 'shop.example.com',
  url: 'https://shop.example.com/products/trail-shoe',
  scannedAt: '2026-11-23T10:00:00.000Z',
  receivedAt: '2026-11-23T10:00:00.120Z',
  country: 'DE',
  platform: { platform: 'platform-a', confidence: 0.9 },
  pageType: 'product',
  grade: 'B',
  percentage: 81.5,
  svc: { detected: false, version: null },
  vertical: null,
  signalPresence: { title: true, description: true, jsonLd: false, openGraph: true, h1: true, canonical: true, robots: null },
};
/** The rollup backlog as the dashboard route and /healthz show it (backlogView in src/scans/backlog.ts). */
export const rollupBacklogSchema = t.Object({
  scans: integer({ description: 'Accepted scans not yet folded into the dashboard rollups: every stats answer reads them one by one (never under the truth; docs/operations.md says when it is over)' }),
  oldestReceivedAt: nullable(isoTime('When the oldest of them was received; null when none waits')),
  ageSeconds: t.Number({ description: 'Seconds the oldest of them has waited; 0 when none waits' }),
  slowsDashboard: t.Boolean({ description: `More than ${NOTICEABLE_BACKLOG.scans.toLocaleString('en')} scans, or the oldest waiting more than ${NOTICEABLE_BACKLOG.seconds} s: the console overview says so` }),
});

const badParameter = [400, 'invalid_query', 'grade: expected one of A, B, C, D, E, F'] as const;

export const scanDocs = {
  badge: apiDoc({
    summary: 'The badge of a host name’s latest scan',
    description: 'An SVG badge (default) or the shields.io endpoint JSON (`format=json`); cacheable for 5 minutes.',
    tag: 'public',
    auth: 'public',
    inputs: [
      { name: 'domain', in: 'query', required: true, description: 'The site’s host name (shop.example.com)', schema: t.String() },
      { name: 'format', in: 'query', description: '`svg` (default) or `json`', schema: t.String({ enum: ['svg', 'json'] }) },
    ],
    responses: {
      200: { description: 'The badge: `image/svg+xml`, or with `format=json` the shields endpoint JSON', schema: t.Object({ schemaVersion: t.Literal(1), label: t.String(), message: t.String(), color: t.String() }), example: { schemaVersion: 1, label: 'AI readiness', message: 'B 82%', color: 'green' }, otherTypes: ['image/svg+xml'] },
      304: { description: 'Not modified (`If-None-Match` matched)' },
    },
    errors: [[400, 'invalid_query', 'domain: expected a bare host name such as shop.example.com']],
  }),
  scans: apiDoc({
    summary: 'List scans',
    description: 'Newest first, in keyset pages; every stored column except the raw signals (see the single scan).',
    tag: 'dashboard',
    auth: 'dashboard',
    inputs: [...filters, { name: 'cursor', in: 'query', description: '`nextCursor` of the previous page', schema: t.String() }, limit(500, 50)],
    responses: { 200: { description: 'One page of scans', schema: page(scanSummary), example: { items: [summaryExample], nextCursor: null } } },
    errors: [badParameter],
  }),
  scan: apiDoc({
    summary: 'Get one scan',
    description: 'With the stored signals, quality scores and any unknown fields the scanner sent (`data`).',
    tag: 'dashboard',
    auth: 'dashboard',
    responses: {
      200: {
        description: 'The scan',
        schema: t.Composite([scanSummary, t.Object({ signals: t.Record(t.String(), t.Unknown()), quality: t.Record(t.String(), t.Unknown()), data: t.Record(t.String(), t.Unknown()) })]),
        example: { ...summaryExample, signals: { title: { value: 'Trail shoe', length: 10 } }, quality: { grade: 'B', percentage: 81.5 }, data: {} },
      },
    },
    errors: [[404, 'not_found', 'no scan with id "scan_unknown"']],
  }),
  hostnames: apiDoc({
    summary: 'Top host names',
    description: 'The host names with the most scans, with their latest scan time.',
    tag: 'dashboard',
    auth: 'dashboard',
    inputs: [...filters, limit(100, 10)],
    responses: {
      200: {
        description: 'Host names, most scans first',
        schema: t.Object({ items: t.Array(t.Object({ hostname: t.String(), scans: integer(), lastScannedAt: isoTime() })) }),
        example: { items: [{ hostname: 'shop.example.com', scans: 42, lastScannedAt: '2026-11-23T10:00:00.000Z' }] },
      },
    },
    errors: [badParameter],
  }),
  stats: apiDoc({
    summary: 'Scan statistics by group',
    description: 'Per group: scans, distinct host names (estimated beyond one host name), average percentage, grade counts and presence rates.',
    tag: 'dashboard',
    auth: 'dashboard',
    inputs: [...filters, { name: 'groupBy', in: 'query', required: true, description: 'Grouping', schema: t.String({ enum: [...GROUP_BYS] }) }],
    responses: {
      200: {
        description: 'The groups, in key order',
        schema: t.Object({
          groupBy: t.String({ enum: [...GROUP_BYS] }),
          groups: t.Array(
            t.Object({
              key: t.Union([t.String(), t.Null()], { description: 'Day (YYYY-MM-DD), month (YYYY-MM) or the grouped value; null for scans without it' }),
              scans: integer(),
              hostnames: integer(),
              averagePercentage: t.Number(),
              grades: t.Record(t.String(), integer()),
              presence: t.Record(t.String(), nullable(t.Number({ minimum: 0, maximum: 1 }))),
            }),
          ),
        }),
        example: { groupBy: 'day', groups: [{ key: '2026-11-23', scans: 42, hostnames: 3, averagePercentage: 78.25, grades: { A: 5, B: 20, C: 10, D: 5, E: 1, F: 1 }, presence: { title: 1, description: 0.9, jsonLd: 0.5, openGraph: 0.75, h1: 1, canonical: 0.8, robots: null } }] },
      },
    },
    errors: [badParameter],
  }),
  rollupBacklog: apiDoc({
    summary: 'The rollup backlog',
    description: 'Scans accepted but not yet folded into the rollups that stats read. Stats count them already, reading each one, so a large backlog makes them slower; the console overview says so while `slowsDashboard`.',
    tag: 'dashboard',
    auth: 'dashboard',
    responses: { 200: { description: 'The backlog now', schema: rollupBacklogSchema, example: { scans: 24_000, oldestReceivedAt: '2026-11-23T10:00:00.000Z', ageSeconds: 12.5, slowsDashboard: true } } },
  }),
};
