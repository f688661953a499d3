const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})$/i;

/** Epoch ms of an ISO-8601 timestamp with a zone, or null. */
export function parseTimestamp(value: unknown): number | null {
  if (typeof value !== 'string' || !ISO_8601.test(value)) return null;
  const ms = Date.parse(value);
  return Number.isFinite(ms) ? ms : null;
}

export const DAY_MS = 86_400_000;

/** ISO-8601 (UTC) of an epoch-ms column that may be null: how API responses show stored times. */
export function isoOrNull(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}
