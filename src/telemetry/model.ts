import { t, type TSchema } from 'elysia';
import { GRADES, PAGE_TYPES, PRESENCE_KEYS, SCAN_PLATFORMS } from '../scans/vocabulary.ts';
import { LIMITS, QUALITY_SCORES } from './payload.ts';

// The telemetry payload of spec §2.1–2.3 as a schema: a payload this schema accepts is stored with
// every field in its column, nothing set aside in `data` (test/telemetry-schema.test.ts checks that
// against the normaliser in payload.ts, which stays the validator: it must also keep what breaks
// these rules). The client's types in clients/probe are checked against `typeof
// telemetryPayload.static` at compile time, so the two cannot drift apart.

// Plain JSON Schema throughout: Elysia's t.Integer also takes numeric strings and t.UnionEnum adds
// a default, which a payload contract must not.
const text = (maxLength: number) => t.String({ maxLength });
const integer = (options: { minimum?: number; maximum?: number } = {}) => t.Number({ multipleOf: 1, ...options });
const oneOf = <T extends string>(values: readonly T[]) => t.Union(values.map((value) => t.Literal(value)));
const textValue = (maxLength: number) => t.Object({ value: t.Optional(text(maxLength)), length: t.Optional(integer()) });
/** The same schema under each of `keys`. */
const each = <K extends string, S extends TSchema>(keys: readonly K[], schema: S) => Object.fromEntries(keys.map((k) => [k, schema])) as Record<K, S>;
const LABEL = '[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?';

export const scanSignals = t.Object(
  {
    title: t.Optional(textValue(LIMITS.text)),
    description: t.Optional(textValue(LIMITS.text)),
    canonical: t.Optional(t.Object({ value: t.Optional(text(LIMITS.url)) })),
    robots: t.Optional(text(LIMITS.robots)),
    lang: t.Optional(text(LIMITS.lang)),
    headings: t.Optional(t.Object({ h1: t.Optional(t.Array(text(LIMITS.text))), h2: t.Optional(t.Array(text(LIMITS.text))) })),
    openGraph: t.Optional(t.Record(t.String(), text(LIMITS.text))),
    jsonLd: t.Optional(t.Array(t.Unknown())),
  },
  { additionalProperties: true, description: 'Raw signals extracted from the page; other keys are stored as sent' },
);

export const telemetryPayload = t.Object(
  {
    hostname: t.String({
      maxLength: LIMITS.hostname,
      // lib/hostname's scan host in either case, with an optional trailing dot (svc lower-cases and drops it).
      pattern: `^${LABEL}(?:\\.${LABEL})*\\.?$`,
      description: 'Bare host name: no scheme, path, port or whitespace',
    }),
    signals: scanSignals,
    url: t.Optional(t.String({ maxLength: LIMITS.url, pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^/?#@\\s]+(?:[/?#]\\S*)?$', description: 'Absolute http(s) URL; query and fragment are dropped' })),
    scannedAt: t.Optional(t.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}[Tt]\\d{2}:\\d{2}(?::\\d{2}(?:\\.\\d{1,9})?)?(?:[Zz]|[+-]\\d{2}:?\\d{2})$', description: 'ISO-8601 with a time zone, at most 5 minutes ahead of server time' })),
    platform: t.Optional(
      t.Object({ platform: t.Optional(oneOf(SCAN_PLATFORMS)), confidence: t.Optional(t.Number({ minimum: 0, maximum: 1 })) }, { additionalProperties: false }),
    ),
    pageType: t.Optional(oneOf(PAGE_TYPES)),
    svc: t.Optional(t.Object({ detected: t.Optional(t.Boolean()), version: t.Optional(text(LIMITS.version)) }, { additionalProperties: false })),
    signalPresence: t.Optional(t.Object(each(PRESENCE_KEYS, t.Optional(t.Boolean())), { additionalProperties: false })),
    quality: t.Optional(
      t.Object(
        {
          grade: t.Optional(oneOf(GRADES)),
          percentage: t.Optional(t.Number({ minimum: 0, maximum: 100 })),
          ...each(QUALITY_SCORES, t.Optional(integer({ minimum: -LIMITS.score, maximum: LIMITS.score }))),
        },
        { additionalProperties: false },
      ),
    ),
    country: t.Optional(t.String({ pattern: '^[A-Za-z]{2}$', description: 'ISO 3166-1 alpha-2, any case; an unassigned code is dropped and GeoIP applies' })),
    vertical: t.Optional(t.String({ maxLength: LIMITS.vertical, pattern: '\\S', description: 'Free-form segment' })),
  },
  { additionalProperties: true, description: 'One page scan (spec §2.1); unknown fields are kept in the scan’s data' },
);

export type TelemetryPayloadSchema = typeof telemetryPayload.static;
