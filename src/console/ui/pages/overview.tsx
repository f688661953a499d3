import { useEffect, useState } from 'preact/hooks';
import { api, type Query } from '../api.ts';
import type { PageProps } from '../app.tsx';
import { Chart } from '../charts.tsx';
import type { BacklogView } from '../../../scans/backlog.ts';
import { agoInWords, inWords } from '../words.ts';
import { BASE } from '../router.ts';
import { timeline, type Interval } from '../time-axis.ts';
import { DataTable, Empty, ErrorNotice, formatNumber, formatTime, Notice, PageHeader, SelectField, TextField, useLoad } from '../ui.tsx';
import { gradeTone } from './scans.tsx';

interface Group {
  key: string | null;
  scans: number;
  hostnames: number;
  averagePercentage: number;
  grades: Record<string, number>;
}
interface Stats {
  groups: Group[];
}
interface TopHost {
  hostname: string;
  scans: number;
  lastScannedAt: string;
}

const DAY = 86_400_000;
const RANGES: [string, string][] = [
  ['7', 'Last 7 days'],
  ['30', 'Last 30 days'],
  ['90', 'Last 90 days'],
  ['365', 'Last 12 months'],
  ['all', 'All time'],
  ['custom', 'Custom range'],
];
const REFRESH_SECONDS = 30;
const GRADE_ORDER = ['A', 'B', 'C', 'D', 'E', 'F'];

const utcDate = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The stats query of a range: whole UTC days, from inclusive, to exclusive. */
function rangeQuery(range: string, from: string, to: string): Query {
  if (range === 'all') return {};
  if (range === 'custom') return { from: from || undefined, to: to ? utcDate(Date.parse(to) + DAY) : undefined };
  const today = Date.parse(utcDate(Date.now()));
  return { from: utcDate(today - (Number(range) - 1) * DAY) };
}

const nameOf = (key: string | null, none: string) => key ?? none;

/**
 * Scans not yet rolled up, while there are enough of them to slow the stats (the server's rule,
 * `slowsDashboard`: over 10,000 scans or the oldest waiting over 10 s); nothing otherwise.
 */
function RollupBacklog({ backlog }: { backlog: BacklogView }) {
  if (!backlog.slowsDashboard) return null;
  const scans = `${formatNumber(backlog.scans)} ${backlog.scans === 1 ? 'scan' : 'scans'}`;
  return (
    <Notice kind="warn">
      Rolling up {scans}, the oldest received {agoInWords(backlog.ageSeconds)}. The stats below count them already, but answer more slowly until they are rolled up.
    </Notice>
  );
}

/** A grade's badge colour (gradeTone), as the CSS custom property the chart reads. */
const gradeColor = (grade: string | null) => `--${grade ? gradeTone(grade) : 'muted'}`;

function Distribution({ title, groups, none, order, limit, colorOf }: { title: string; groups: Group[]; none: string; order?: string[]; limit?: number; colorOf?: (key: string | null) => string }) {
  let sorted = order ? order.map((k) => groups.find((g) => g.key === k) ?? { key: k, scans: 0 }) : [...groups].sort((a, b) => b.scans - a.scans);
  if (limit) sorted = sorted.slice(0, limit);
  if (sorted.length === 0) return null;
  return (
    <Chart
      title={title}
      x={sorted.map((_, i) => i)}
      categories={sorted.map((g) => nameOf(g.key, none))}
      series={[{ label: 'Scans', values: sorted.map((g) => g.scans), kind: 'bars', ...(colorOf ? { colors: sorted.map((g) => colorOf(g.key)) } : {}) }]}
      height={220}
    />
  );
}

export function Overview({ route }: PageProps) {
  const [range, setRange] = useState(route.query.get('range') ?? '30');
  const [interval, setInterval_] = useState<Interval>('day');
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const [auto, setAuto] = useState(true);
  const query = rangeQuery(range, from, to);
  const key = JSON.stringify([query, interval]);

  const stats = useLoad(async () => {
    const get = (groupBy: string) => api<Stats>('/api/v1/dashboard/stats', { query: { ...query, groupBy } }).then((s) => s.groups);
    const [time, grade, platform, pageType, country, top, backlog] = await Promise.all([
      get(interval),
      get('grade'),
      get('platform'),
      get('pageType'),
      get('country'),
      api<{ items: TopHost[] }>('/api/v1/dashboard/hostnames', { query: { ...query, limit: 10 } }).then((r) => r.items),
      api<BacklogView>('/api/v1/dashboard/rollup-backlog'),
    ]);
    return { time, grade, platform, pageType, country, top, backlog, at: new Date() };
  }, [key]);

  useEffect(() => {
    if (!auto) return;
    const timer = setInterval(() => document.visibilityState === 'visible' && stats.reload(), REFRESH_SECONDS * 1000);
    return () => clearInterval(timer);
  }, [auto, stats.reload]);

  const data = stats.data;
  const total = data ? data.time.reduce((sum, g) => sum + g.scans, 0) : 0;
  const average = data && total > 0 ? data.time.reduce((sum, g) => sum + g.averagePercentage * g.scans, 0) / total : null;
  const topGrades = data ? data.grade.filter((g) => g.key === 'A' || g.key === 'B').reduce((sum, g) => sum + g.scans, 0) : 0;
  const line = data ? timeline(data.time, interval, { from: query.from as string | undefined, to: query.to as string | undefined }) : null;

  return (
    <>
      <PageHeader title="Overview">
        <button type="button" class="button secondary" onClick={stats.reload} disabled={stats.loading}>
          {stats.loading ? 'Refreshing…' : 'Refresh'}
        </button>
      </PageHeader>
      <form class="toolbar card" onSubmit={(e) => e.preventDefault()} aria-label="Range">
        <SelectField label="Range" value={range} onValue={setRange} options={RANGES} />
        {range === 'custom' ? (
          <>
            <TextField label="From (UTC day)" type="date" value={from} onValue={setFrom} />
            <TextField label="To (UTC day, inclusive)" type="date" value={to} onValue={setTo} />
          </>
        ) : null}
        <SelectField label="Scans per" value={interval} onValue={(v) => setInterval_(v as Interval)} options={[['day', 'Day'], ['month', 'Month']]} />
        <div class="field checkbox">
          <label>
            <input type="checkbox" checked={auto} onChange={(e) => setAuto(e.currentTarget.checked)} /> Refresh every {REFRESH_SECONDS} s
          </label>
        </div>
        <p class="muted updated" role="status">
          {data ? `Updated ${data.at.toLocaleTimeString()}` : ''}
        </p>
      </form>
      <ErrorNotice error={stats.error} />
      {data ? (
        <>
          <RollupBacklog backlog={data.backlog} />
          <div class="totals">
            <div class="card total">
              <span class="total-label">Scans</span>
              <span class="total-value">{formatNumber(total)}</span>
            </div>
            <div class="card total">
              <span class="total-label">Average score</span>
              <span class="total-value">{average === null ? '—' : `${average.toFixed(1)} %`}</span>
            </div>
            <div class="card total">
              <span class="total-label">Graded A or B</span>
              <span class="total-value">{total > 0 ? `${Math.round((topGrades / total) * 100)} %` : '—'}</span>
            </div>
            <div class="card total">
              <span class="total-label">Countries</span>
              <span class="total-value">{formatNumber(data.country.filter((g) => g.key !== null).length)}</span>
            </div>
          </div>
          {total === 0 ? (
            <Empty>
              No scans in this range yet. Scanners send them to <code>POST /api/v1/probe/telemetry</code>; sign-ups on the <a href="/">start page</a> get a token.
            </Empty>
          ) : (
            <>
              <Chart
                title={`Scans per ${interval}`}
                x={line!.x}
                interval={interval}
                series={[
                  { label: 'Scans', values: line!.scans, kind: 'bars' },
                  { label: 'Average score (%)', values: line!.score, kind: 'line', rightAxis: true, format: (v) => `${v.toFixed(1)} %` },
                ]}
                height={260}
              />
              <div class="chart-grid">
                <Distribution title="By grade" groups={data.grade} none="—" order={GRADE_ORDER} colorOf={gradeColor} />
                <Distribution title="By platform" groups={data.platform.map((g) => ({ ...g, key: g.key && inWords(g.key) }))} none="not reported" />
                <Distribution title="By page type" groups={data.pageType.map((g) => ({ ...g, key: g.key && inWords(g.key) }))} none="not reported" />
                <Distribution title="By country (top 10)" groups={data.country} none="unknown" limit={10} />
              </div>
              <section class="card">
                <h2>Top hostnames</h2>
                <DataTable
                  caption="Top hostnames by scans"
                  columns={[{ label: 'Hostname' }, { label: 'Scans', class: 'num' }, { label: 'Latest scan' }]}
                  rows={data.top.map((h) => ({
                    key: h.hostname,
                    cells: [<a href={`${BASE}/scans?hostname=${encodeURIComponent(h.hostname)}`}>{h.hostname}</a>, formatNumber(h.scans), formatTime(h.lastScannedAt)],
                  }))}
                />
              </section>
            </>
          )}
        </>
      ) : null}
    </>
  );
}
