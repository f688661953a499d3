import { useState } from 'preact/hooks';
import type { ScanSummary } from '../../../scans/views.ts';
import { GRADES, PAGE_TYPES, SCAN_PLATFORMS } from '../../../scans/vocabulary.ts';
import { api, type Page } from '../api.ts';
import type { PageProps } from '../app.tsx';
import { BASE, navigate } from '../router.ts';
import { Badge, DataTable, Empty, ErrorNotice, formatTime, Loading, PageHeader, Pager, SelectField, TextField, useLoad, usePager } from '../ui.tsx';
import { countryName, inWords } from '../words.ts';

interface ScanRecord extends ScanSummary {
  signals: Record<string, unknown>;
  quality: Record<string, unknown>;
  data: Record<string, unknown>;
}

const FILTERS = ['hostname', 'country', 'platform', 'pageType', 'grade', 'from', 'to'] as const;
type Filters = Record<(typeof FILTERS)[number], string>;
const any = (values: readonly string[], name: (value: string) => string = (v) => v): [string, string][] => [['', 'Any'], ...values.map((v): [string, string] => [v, name(v)])];

/** The countries scans came from (all time), by name, each with its code; `chosen` stays offered when no scan has it (a bookmarked filter). */
function countryOptions(present: string[], chosen: string): [string, string][] {
  const codes = [...new Set([...present, ...(chosen ? [chosen.toUpperCase()] : [])])];
  const named = codes.map((code): [string, string] => [code, `${countryName(code)} (${code})`]).sort((a, b) => a[1].localeCompare(b[1]));
  return [['', 'Any'], ...named];
}
const hasFilter = (filters: Filters) => Object.values(filters).some((value) => value.trim() !== '');

export const gradeTone = (grade: string) => (grade === 'A' || grade === 'B' ? 'ok' : grade === 'C' || grade === 'D' ? 'warn' : 'danger');

/** Filters live in the URL, so a filtered list can be bookmarked and Back works. */
function filtersOf(query: URLSearchParams): Filters {
  return Object.fromEntries(FILTERS.map((name) => [name, query.get(name) ?? ''])) as Filters;
}

export function Scans({ route }: PageProps) {
  const applied = filtersOf(route.query);
  const [draft, setDraft] = useState<Filters>(applied);
  const [limit, setLimit] = useState('25');
  const pager = usePager();
  const appliedKey = route.query.toString();
  const list = useLoad(
    () => api<Page<ScanSummary>>('/api/v1/dashboard/scans', { query: { ...applied, cursor: pager.cursor, limit } }),
    [appliedKey, pager.cursor, limit],
  );
  const countries = useLoad(
    () => api<{ groups: { key: string | null }[] }>('/api/v1/dashboard/stats', { query: { groupBy: 'country' } }).then((s) => s.groups.flatMap((g) => (g.key ? [g.key] : []))),
    [],
  );
  const set = (name: keyof Filters) => (value: string) => setDraft((d) => ({ ...d, [name]: value }));
  const apply = (event: Event) => {
    event.preventDefault();
    pager.reset();
    const params = new URLSearchParams(Object.entries(draft).filter(([, v]) => v.trim() !== ''));
    navigate(`/scans${params.size ? `?${params}` : ''}`);
  };
  const clear = () => {
    setDraft(filtersOf(new URLSearchParams()));
    pager.reset();
    navigate('/scans');
  };

  return (
    <>
      <PageHeader title="Scans" />
      <form class="filters card" onSubmit={apply} aria-label="Filter scans">
        <TextField label="Hostname" value={draft.hostname} onValue={set('hostname')} placeholder="shop.example.com" />
        <SelectField label="Country" value={draft.country} onValue={set('country')} options={countryOptions(countries.data ?? [], draft.country)} hint={countries.data?.length === 0 ? 'No scan has reported a country yet.' : undefined} />
        <SelectField label="Platform" value={draft.platform} onValue={set('platform')} options={any(SCAN_PLATFORMS, inWords)} />
        <SelectField label="Page type" value={draft.pageType} onValue={set('pageType')} options={any(PAGE_TYPES, inWords)} />
        <SelectField label="Grade" value={draft.grade} onValue={set('grade')} options={any(GRADES)} />
        <TextField label="From (UTC day)" type="date" value={draft.from} onValue={set('from')} />
        <TextField label="Before (UTC day)" type="date" value={draft.to} onValue={set('to')} />
        <SelectField label="Per page" value={limit} onValue={(v) => (setLimit(v), pager.reset())} options={[['25', '25'], ['50', '50'], ['100', '100']]} />
        <div class="filter-actions">
          <button class="button" type="submit">
            Apply filters
          </button>
          <button class="button secondary" type="button" onClick={clear}>
            Clear
          </button>
        </div>
      </form>
      <ErrorNotice error={list.error} />
      {list.loading && !list.data ? <Loading what="scans" /> : null}
      {list.data ? (
        list.data.items.length === 0 ? (
          hasFilter(applied) ? (
            <Empty>
              No scans match these filters.{' '}
              <button type="button" class="button secondary small" onClick={clear}>
                Clear the filters
              </button>
            </Empty>
          ) : (
            <Empty>
              No scans yet. Scanners send them to <code>POST /api/v1/probe/telemetry</code> with a token from the <a href="/">start page</a> or a <code>probe:scan</code> key.
            </Empty>
          )
        ) : (
          <>
            <DataTable
              card
              caption="Scans, newest first"
              columns={[{ label: 'Scanned' }, { label: 'Hostname' }, { label: 'Page type' }, { label: 'Platform' }, { label: 'Country' }, { label: 'Grade' }, { label: 'Score', class: 'num' }]}
              rows={list.data.items.map((scan) => ({
                key: scan.id,
                cells: [
                  <a href={`${BASE}/scans/${scan.id}`}>{formatTime(scan.scannedAt)}</a>,
                  scan.hostname,
                  inWords(scan.pageType),
                  inWords(scan.platform?.platform),
                  scan.country ?? '—',
                  <Badge tone={gradeTone(scan.grade)}>{scan.grade}</Badge>,
                  `${scan.percentage} %`,
                ],
              }))}
            />
            <Pager pager={pager} nextCursor={list.data.nextCursor} count={list.data.items.length} />
          </>
        )
      ) : null}
    </>
  );
}

const json = (value: unknown) => JSON.stringify(value, null, 2);

export function ScanDetail({ id }: { id: string }) {
  const scan = useLoad(() => api<ScanRecord>(`/api/v1/dashboard/scans/${encodeURIComponent(id)}`), [id]);
  return (
    <>
      <p>
        <a href={`${BASE}/scans`}>← All scans</a>
      </p>
      <PageHeader title={scan.data ? scan.data.hostname : 'Scan'} />
      <ErrorNotice error={scan.error} />
      {scan.loading ? <Loading what="the scan" /> : null}
      {scan.data ? (
        <div class="detail-grid">
          <section class="card">
            <h2>Summary</h2>
            <dl class="facts">
              <dt>URL</dt>
              <dd>
                <code>{scan.data.url}</code>
              </dd>
              <dt>Scanned</dt>
              <dd>{formatTime(scan.data.scannedAt)}</dd>
              <dt>Received</dt>
              <dd>{formatTime(scan.data.receivedAt)}</dd>
              <dt>Grade</dt>
              <dd>
                <Badge tone={gradeTone(scan.data.grade)}>{scan.data.grade}</Badge> {scan.data.percentage} %
              </dd>
              <dt>Page type</dt>
              <dd>{inWords(scan.data.pageType)}</dd>
              <dt>Platform</dt>
              <dd>{scan.data.platform ? `${inWords(scan.data.platform.platform)} (confidence ${scan.data.platform.confidence ?? '—'})` : '—'}</dd>
              <dt>Country</dt>
              <dd>{scan.data.country ? `${countryName(scan.data.country)} (${scan.data.country})` : '—'}</dd>
              <dt>svc detected</dt>
              <dd>{scan.data.svc.detected === null ? '—' : scan.data.svc.detected ? `yes${scan.data.svc.version ? `, version ${scan.data.svc.version}` : ''}` : 'no'}</dd>
              <dt>Vertical</dt>
              <dd>{scan.data.vertical ?? '—'}</dd>
            </dl>
          </section>
          <section class="card">
            <h2>Signal presence</h2>
            <ul class="presence">
              {Object.entries(scan.data.signalPresence).map(([name, present]) => (
                <li key={name}>
                  <Badge tone={present === null ? 'neutral' : present ? 'ok' : 'danger'}>{present === null ? 'not reported' : present ? 'present' : 'missing'}</Badge> {name}
                </li>
              ))}
            </ul>
            <h2>Quality</h2>
            <pre>
              <code>{json(scan.data.quality)}</code>
            </pre>
          </section>
          <section class="card wide">
            <h2>Signals</h2>
            <pre>
              <code>{json(scan.data.signals)}</code>
            </pre>
            <h2>Extras</h2>
            {Object.keys(scan.data.data).length === 0 ? (
              <p class="muted">No extra fields.</p>
            ) : (
              <pre>
                <code>{json(scan.data.data)}</code>
              </pre>
            )}
          </section>
        </div>
      ) : null}
    </>
  );
}
