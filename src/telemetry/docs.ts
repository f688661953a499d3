import { t } from 'elysia';
import { apiDoc, integer, type Failure } from '../lib/api-doc.ts';
import { telemetryPayload } from './model.ts';
import { MAX_BULK_SCANS } from './pipeline.ts';

// OpenAPI descriptions of the probe routes (src/telemetry/routes.ts). They read the raw body
// themselves (mode 2 signs the exact bytes), so the payload schema is documented here rather than
// given to Elysia as a `body` schema: Elysia never parses these bodies.

const payloadExample = {
  hostname: 'shop.example.com',
  url: 'https://shop.example.com/products/trail-shoe',
  scannedAt: '2026-11-23T10:00:00Z',
  platform: { platform: 'platform-a', confidence: 0.9 },
  pageType: 'product',
  signals: { title: { value: 'Trail shoe', length: 10 }, canonical: { value: 'https://shop.example.com/products/trail-shoe' }, lang: 'en' },
  signalPresence: { title: true, description: false, jsonLd: true },
  quality: { grade: 'B', percentage: 81.5 },
  country: 'DE',
};

const signing =
  'Authenticate with mode 1 (`X-Probe-Token`, a lead token from sign-up) or mode 2 (`X-Probe-Key` + `X-Probe-Timestamp` in epoch milliseconds + `X-Probe-Signature`, the hex HMAC-SHA256 of `<timestamp>.<raw body>` keyed with the key; docs/signing.md shows it in shell, Node and Python). Rate-limited per tier before the body is read: over the limit is 429 with `Retry-After`. With `SVC_PROBE_CORS_ORIGINS` set, browsers may call it from the listed origins with a lead token (an `OPTIONS` preflight is answered 204; docs/browser-scanners.md).';

const rateHeaders = {
  'RateLimit-Limit': 'The tier’s scans per minute',
  'RateLimit-Remaining': 'Scans left in the current window',
  'RateLimit-Reset': 'Seconds until the bucket is full again',
};

const common: Failure[] = [
  [400, 'malformed_json', 'request body is not valid JSON: Unexpected end of JSON input'],
  [400, 'missing_field', 'hostname is required'],
  [400, 'invalid_field', 'hostname must be a bare host name (no scheme, path, port or whitespace) of at most 253 characters'],
  [401, 'invalid_timestamp', 'X-Probe-Timestamp must be the current time in epoch milliseconds'],
  [401, 'ambiguous_auth', 'send the headers of one authentication mode only: X-Probe-Token or X-Probe-Key'],
  [413, 'payload_too_large', 'request body exceeds the limit of 524288 bytes'],
];

export const telemetryDocs = {
  telemetry: apiDoc({
    summary: 'Send one page scan',
    description: `${signing} The answer comes once the scan is committed. docs/telemetry.md describes every field and the \`signals.*\` keys.`,
    tag: 'probe',
    auth: 'probe',
    body: { schema: telemetryPayload, description: 'One page scan (JSON). Unknown fields are kept in the scan’s `data`.', example: payloadExample },
    responses: { 204: { description: 'Stored (committed)', headers: rateHeaders } },
    errors: common,
  }),
  bulk: apiDoc({
    summary: 'Send a batch of page scans',
    description: `${signing} One token per scan: a batch the tier cannot cover this minute is 429 and nothing is stored; one larger than the tier’s per-minute capacity is 400 \`batch_exceeds_limit\`. Invalid items are reported by index, the valid ones are committed together; a scan with the same url and scannedAt as a stored one is skipped.`,
    tag: 'probe',
    auth: 'probe',
    body: {
      schema: t.Object({ scans: t.Array(telemetryPayload, { minItems: 1, maxItems: MAX_BULK_SCANS }) }, { additionalProperties: false }),
      description: `Up to ${MAX_BULK_SCANS} scans (JSON); the body may be up to 16 MiB.`,
      example: { scans: [payloadExample] },
    },
    responses: {
      200: {
        description: 'Committed: counts and the refused items',
        schema: t.Object({
          inserted: integer({ minimum: 0 }),
          skipped: integer({ minimum: 0, description: 'Duplicates of stored scans (same url and scannedAt)' }),
          errors: t.Array(t.Object({ index: integer({ minimum: 0 }), error: t.String(), detail: t.String() })),
        }),
        example: { inserted: 1, skipped: 0, errors: [] },
        headers: rateHeaders,
      },
    },
    errors: [
      ...common,
      [400, 'invalid_request', 'scans must hold at least one scan'],
      [400, 'too_many_scans', `scans holds 1200 items; at most ${MAX_BULK_SCANS} per request`],
      [400, 'batch_exceeds_limit', "the batch holds 800 scans, more than the verified tier's capacity of 600 scans per minute (one token per scan); split it into batches of at most 600"],
    ],
  }),
};
