import { describe, expect, test } from 'bun:test';
import { periodName, tickLabel, timeline, timeTicks } from '../src/console/ui/time-axis.ts';

// The Overview's scans-over-time chart: one bar per UTC day or month at the bucket's start, and axis
// labels only on those starts (weeks on Mondays, months on month starts), named as the period.

const seconds = (iso: string) => Date.parse(iso) / 1000;
const iso = (s: number) => new Date(s * 1000).toISOString();

describe('the Overview’s time axis', () => {
  test('month buckets over all time: one bar per month, each at the 1st 00:00 UTC, with zero months filled in', () => {
    const line = timeline(
      [
        { key: '2025-11', scans: 4, averagePercentage: 70 },
        { key: '2026-02', scans: 2, averagePercentage: 50 },
      ],
      'month',
      {},
      Date.parse('2026-03-17T12:00:00Z'),
    );
    expect(line.x.map(iso)).toEqual(['2025-11-01', '2025-12-01', '2026-01-01', '2026-02-01', '2026-03-01'].map((d) => `${d}T00:00:00.000Z`));
    expect(line.scans).toEqual([4, 0, 0, 2, 0]);
    expect(line.score).toEqual([70, null, null, 50, null]);
  });

  test('month labels sit on month starts and name the month; when there is no room, every few months from January', () => {
    // April 2024 to March 2027.
    const months = Array.from({ length: 36 }, (_, i) => seconds(`${2024 + Math.floor((i + 3) / 12)}-${String(((i + 3) % 12) + 1).padStart(2, '0')}-01T00:00:00Z`));
    expect(timeTicks(months.slice(0, 5), 'month', 600)).toEqual(months.slice(0, 5));
    const ticks = timeTicks(months, 'month', 600);
    expect(ticks.length).toBeLessThanOrEqual(600 / 72);
    expect(ticks.map(iso)).toEqual(['2024-07', '2025-01', '2025-07', '2026-01', '2026-07', '2027-01'].map((m) => `${m}-01T00:00:00.000Z`));
    expect(tickLabel(ticks[0]!, 'month')).toBe('Jul 2024');
    expect(periodName(ticks[0]!, 'month')).toBe('July 2024');
  });

  test('day labels: every day while each has room, else the week starts (Mondays)', () => {
    const line = timeline([], 'day', { from: '2026-03-01', to: '2026-04-01' });
    expect(line.x).toHaveLength(31);
    expect(timeTicks(line.x.slice(0, 7), 'day', 600)).toEqual(line.x.slice(0, 7));
    const ticks = timeTicks(line.x, 'day', 600);
    expect(ticks.map((s) => new Date(s * 1000).getUTCDay())).toEqual([1, 1, 1, 1, 1]);
    expect(ticks.map(iso)[0]).toBe('2026-03-02T00:00:00.000Z');
    expect(timeTicks(line.x, 'day', 200).length).toBeLessThanOrEqual(2);
    expect(tickLabel(ticks[0]!, 'day')).toBe('Mar 2');
    expect(periodName(ticks[0]!, 'day')).toBe('2026-03-02');
  });
});
