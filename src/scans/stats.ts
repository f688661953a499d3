import { GRADES, PRESENCE_KEYS } from './vocabulary.ts';
import { DAY_MS } from '../lib/time.ts';
import type { GroupBy } from './filters.ts';
import { dayOf, Measures, monthOf, NONE, type RawStatsRow } from './rollups.ts';

type Key = string | number | null;
type Row = Record<string, unknown>;

const RAW_GROUP_COLUMN: Record<Exclude<GroupBy, 'day' | 'month'>, string> = { country: 'country', platform: 'platform', pageType: 'page_type', grade: 'grade' };

class Group extends Measures {
  readonly grades = Object.fromEntries(GRADES.map((g) => [g, 0])) as Record<string, number>;
  /** Exact hostnames, kept only when every row of the query is read raw (a hostname filter). */
  readonly exactHostnames: Set<string> | null;

  constructor(exact: boolean) {
    super();
    this.exactHostnames = exact ? new Set() : null;
  }
}

/** Stats groups accumulated from raw scans and rollup rows alike. */
export class StatsGroups {
  private readonly groups = new Map<Key, Group>();

  constructor(
    private readonly groupBy: GroupBy,
    private readonly exact: boolean,
  ) {}

  private group(key: Key): Group {
    let group = this.groups.get(key);
    if (!group) this.groups.set(key, (group = new Group(this.exact)));
    return group;
  }

  /** Time groups are keyed by day number (a month by its first day); the others by the column's value. */
  private timeKey(day: number): number {
    return this.groupBy === 'month' ? monthOf(day) : day;
  }

  addRows(rows: RawStatsRow[]): void {
    for (const row of rows) {
      const group = this.group(this.groupBy === 'day' || this.groupBy === 'month' ? this.timeKey(dayOf(row.scanned_at)) : (row[RAW_GROUP_COLUMN[this.groupBy]] as Key));
      group.addRow(row);
      group.grades[row.grade]!++;
      group.exactHostnames?.add(row.hostname);
    }
  }

  addRollups(rows: Row[]): void {
    const byTime = this.groupBy === 'day' || this.groupBy === 'month';
    const column = byTime ? 'day' : RAW_GROUP_COLUMN[this.groupBy as Exclude<GroupBy, 'day' | 'month'>];
    for (const row of rows) {
      const value = row[column] as Key;
      // A month row's day is already its month's first day.
      const group = this.group(byTime ? this.timeKey(value as number) : value === NONE ? null : value);
      group.addRollup(row);
      group.grades[row.grade as string]! += row.scans as number;
    }
  }

  /** Groups in key order (null first, as SQLite orders), rates and averages rounded. */
  result() {
    const keys = [...this.groups.keys()].sort((a, b) => (a === b ? 0 : a === null ? -1 : b === null ? 1 : a < b ? -1 : 1));
    return keys.map((key) => {
      const group = this.groups.get(key)!;
      return {
        key: this.groupBy === 'day' ? new Date((key as number) * DAY_MS).toISOString().slice(0, 10) : this.groupBy === 'month' ? new Date((key as number) * DAY_MS).toISOString().slice(0, 7) : key,
        scans: group.scans,
        hostnames: group.exactHostnames?.size ?? group.hostnames.estimate(),
        averagePercentage: Math.round((group.percentageSum / group.scans) * 100) / 100,
        grades: group.grades,
        // Share of the scans that reported the key (true or false) in which it was present; null when none did.
        presence: Object.fromEntries(
          PRESENCE_KEYS.map((k, i) => {
            const reported = group.reported[i]!;
            return [k, reported === 0 ? null : Math.round((group.present[i]! / reported) * 10_000) / 10_000];
          }),
        ),
      };
    });
  }
}

/** One group of a stats answer. */
export type StatsGroup = ReturnType<StatsGroups['result']>[number];
