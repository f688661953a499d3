// The Overview's time buckets and the x axis that names them: one bar per UTC day or month, drawn at
// the bucket's start, with axis labels on those starts (days on week starts when they are too many
// to name each, months on month starts), so a bar always sits on the label of its own period.

export type Interval = 'day' | 'month';

const DAY_MS = 86_400_000;
/** Months between labels when not every month has room: a year's divisors, then whole years. */
const MONTH_STEPS = [2, 3, 6, 12, 24, 60, 120];
/** Room one axis label needs, in CSS pixels. */
const LABEL_PX = 72;

const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

export interface Bucket {
  /** `YYYY-MM-DD` for days, `YYYY-MM` for months (the stats API's keys). */
  key: string | null;
  scans: number;
  averagePercentage: number;
}

/**
 * Every day (or month) from `from` (else the first bucket) to the day before `to` (else today), at
 * its start in epoch seconds, with zero scans where nothing was scanned.
 */
export function timeline(buckets: Bucket[], interval: Interval, range: { from?: string; to?: string }, now = Date.now()) {
  const counts = new Map(buckets.map((b) => [b.key, b]));
  const start = range.from ?? buckets[0]?.key ?? null;
  const end = range.to ? utcDay(Date.parse(range.to) - DAY_MS) : utcDay(now);
  const x: number[] = [];
  const scans: number[] = [];
  const score: (number | null)[] = [];
  if (!start) return { x, scans, score };
  const cursor = new Date(interval === 'day' ? `${start.slice(0, 10)}T00:00:00Z` : `${start.slice(0, 7)}-01T00:00:00Z`);
  const last = Date.parse(interval === 'day' ? `${end}T00:00:00Z` : `${end.slice(0, 7)}-01T00:00:00Z`);
  for (let guard = 0; cursor.getTime() <= last && guard < 4000; guard++) {
    const key = interval === 'day' ? utcDay(cursor.getTime()) : utcDay(cursor.getTime()).slice(0, 7);
    const bucket = counts.get(key);
    x.push(cursor.getTime() / 1000);
    scans.push(bucket?.scans ?? 0);
    score.push(bucket ? bucket.averagePercentage : null);
    if (interval === 'day') cursor.setUTCDate(cursor.getUTCDate() + 1);
    else cursor.setUTCMonth(cursor.getUTCMonth() + 1);
  }
  return { x, scans, score };
}

/**
 * Where the x axis puts its labels, a subset of the buckets' starts `x` (epoch seconds) that fits
 * `width` pixels: every bucket when each has room; else for days the week starts (Mondays, every
 * few weeks when even those are too many), for months every 2nd, 3rd, 6th or 12th month counted
 * from January (or whole years).
 */
export function timeTicks(x: number[], interval: Interval, width: number): number[] {
  const room = Math.max(1, Math.floor(width / LABEL_PX));
  if (x.length <= room) return x;
  if (interval === 'month') {
    // Months since year 0: a step that divides 12 keeps January among the labels.
    const months = (s: number) => new Date(s * 1000).getUTCFullYear() * 12 + new Date(s * 1000).getUTCMonth();
    const every = MONTH_STEPS.find((n) => Math.ceil(x.length / n) <= room) ?? MONTH_STEPS[MONTH_STEPS.length - 1]!;
    return x.filter((s) => months(s) % every === 0);
  }
  const mondays = x.filter((s) => new Date(s * 1000).getUTCDay() === 1);
  const every = Math.max(1, Math.ceil(mondays.length / room));
  return mondays.filter((_, i) => i % every === 0);
}

const MONTH_LONG = new Intl.DateTimeFormat('en', { month: 'long', year: 'numeric', timeZone: 'UTC' });
const MONTH_SHORT = new Intl.DateTimeFormat('en', { month: 'short', year: 'numeric', timeZone: 'UTC' });
const DAY_SHORT = new Intl.DateTimeFormat('en', { month: 'short', day: 'numeric', timeZone: 'UTC' });

/** A bucket's name in the tooltip and the data table: `2026-03-02`, or `March 2026`. */
export const periodName = (seconds: number, interval: Interval) => (interval === 'day' ? utcDay(seconds * 1000) : MONTH_LONG.format(seconds * 1000));

/** A bucket's label on the axis: `Mar 2`, or `Mar 2026`. */
export const tickLabel = (seconds: number, interval: Interval) => (interval === 'day' ? DAY_SHORT : MONTH_SHORT).format(seconds * 1000);
