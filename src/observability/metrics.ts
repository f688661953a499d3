import type { MaybePromise } from '../lib/maybe-promise.ts';
/**
 * In-process metrics in the Prometheus text format (version 0.0.4). Every label value comes from a
 * closed set svc defines (route templates, methods, status classes, tiers, outcome codes), never from
 * raw client input, so the number of series is bounded whatever clients send.
 */

/** Seconds; the defaults of the Prometheus client libraries, with a 1 ms step at the bottom. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const BATCH_ROW_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512];

const escapeLabel = (value: string) => value.replace(/[\\"\n]/g, (c) => (c === '\n' ? '\\n' : `\\${c}`));

/** `{a="x",b="y"}` for the given names and values ('' without labels). */
function labelText(names: readonly string[], values: readonly string[], extra = ''): string {
  const parts = names.map((name, i) => `${name}="${escapeLabel(values[i]!)}"`);
  if (extra) parts.push(extra);
  return parts.length ? `{${parts.join(',')}}` : '';
}

const header = (name: string, type: string, help: string) => `# HELP ${name} ${help}\n# TYPE ${name} ${type}\n`;

/** A histogram's counts; `observe` is a short linear scan over the bucket bounds. */
class HistogramData {
  readonly counts: number[];
  sum = 0;
  count = 0;
  constructor(readonly bounds: readonly number[]) {
    this.counts = new Array(bounds.length).fill(0);
  }
  observe(value: number): void {
    this.sum += value;
    this.count++;
    const bounds = this.bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= bounds[i]!) {
        this.counts[i]!++;
        return;
      }
    }
  }
  render(name: string, names: readonly string[], values: readonly string[]): string {
    let out = '';
    let cumulative = 0;
    this.bounds.forEach((bound, i) => {
      cumulative += this.counts[i]!;
      out += `${name}_bucket${labelText(names, values, `le="${bound}"`)} ${cumulative}\n`;
    });
    out += `${name}_bucket${labelText(names, values, 'le="+Inf"')} ${this.count}\n`;
    out += `${name}_sum${labelText(names, values)} ${this.sum}\n`;
    out += `${name}_count${labelText(names, values)} ${this.count}\n`;
    return out;
  }
}

/** The series of one metric, one per combination of label values, created on first use. */
class SeriesMap<T> {
  private readonly entries = new Map<string, { values: string[]; data: T }>();
  private readonly pairs = new Map<string, Map<string, T>>();
  constructor(private readonly create: () => T) {}
  of(values: readonly string[]): T {
    const key = values.join('\u0000');
    let entry = this.entries.get(key);
    if (!entry) this.entries.set(key, (entry = { values: [...values], data: this.create() }));
    return entry.data;
  }
  /**
   * `of([first, second])` for a two-label metric counted per request, found by two map lookups on
   * the values as given instead of joining them into a new key string (and an array) each time.
   * Its label values come from closed sets (tiers, endpoints, platforms, outcomes), as for `of`.
   */
  ofPair(first: string, second: string): T {
    let byFirst = this.pairs.get(first);
    if (!byFirst) this.pairs.set(first, (byFirst = new Map()));
    let data = byFirst.get(second);
    if (data === undefined) byFirst.set(second, (data = this.of([first, second])));
    return data;
  }
  [Symbol.iterator]() {
    return this.entries.values();
  }
}

/** A counter per label combination. */
class LabeledCounter {
  private readonly series = new SeriesMap(() => ({ value: 0 }));
  constructor(
    readonly name: string,
    readonly help: string,
    readonly labels: readonly string[],
  ) {}
  inc(values: readonly string[], by = 1): void {
    this.series.of(values).value += by;
  }
  /** `inc([first, second], by)` for a counter with two labels (see SeriesMap.ofPair). */
  incPair(first: string, second: string, by = 1): void {
    this.series.ofPair(first, second).value += by;
  }
  render(): string {
    let out = header(this.name, 'counter', this.help);
    for (const { values, data } of this.series) out += `${this.name}${labelText(this.labels, values)} ${data.value}\n`;
    return out;
  }
}

class Histogram {
  private readonly series: SeriesMap<HistogramData>;
  constructor(
    readonly name: string,
    readonly help: string,
    readonly labels: readonly string[],
    bounds: readonly number[],
  ) {
    this.series = new SeriesMap(() => new HistogramData(bounds));
  }
  observe(values: readonly string[], value: number): void {
    this.series.of(values).observe(value);
  }
  render(): string {
    let out = header(this.name, 'histogram', this.help);
    for (const { values, data } of this.series) out += data.render(this.name, this.labels, values);
    return out;
  }
}

const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'] as const;

/** Per route template and method: requests by status class and a latency histogram, without string keys on the hot path. */
class RouteSeries {
  readonly byClass = [0, 0, 0, 0, 0];
  readonly latency = new HistogramData(LATENCY_BUCKETS);
  count(status: number, seconds: number): void {
    this.byClass[Math.min(5, Math.max(1, Math.floor(status / 100))) - 1]!++;
    this.latency.observe(seconds);
  }
}

/** One sample by hand: a gauge or counter without labels, or with the given ones. */
export function sample(name: string, type: 'counter' | 'gauge', help: string, rows: { labels?: Record<string, string>; value: number }[]): string {
  let out = header(name, type, help);
  for (const { labels = {}, value } of rows) out += `${name}${labelText(Object.keys(labels), Object.values(labels))} ${value}\n`;
  return out;
}

export function createMetrics() {
  const routes = new Map<string, Map<string, RouteSeries>>();
  const scansIngested = new LabeledCounter('svc_scans_ingested_total', 'Scans committed, by rate-limit tier and endpoint.', ['tier', 'endpoint']);
  const webhookDeliveries = new LabeledCounter('svc_webhook_deliveries_total', 'Inbound webhook deliveries, by platform and outcome (an outcome of the 200 answer, or the error code).', ['platform', 'outcome']);
  const writerBatchRows = new Histogram('svc_scan_writer_batch_rows', 'Rows per group-commit transaction of the scan writer.', [], BATCH_ROW_BUCKETS);
  const writerCommitSeconds = new Histogram('svc_scan_writer_commit_seconds', 'Duration of each group-commit transaction of the scan writer.', [], LATENCY_BUCKETS);
  /** Sections computed at scrape time (database sizes, queue depth, limiter size...); a promise where storage must be asked. */
  const collectors: (() => MaybePromise<string>)[] = [];

  /** The series of a route template and method, created on its first request. */
  const seriesOf = (route: string, method: string): RouteSeries => {
    let byMethod = routes.get(route);
    if (!byMethod) routes.set(route, (byMethod = new Map()));
    let series = byMethod.get(method);
    if (!series) byMethod.set(method, (series = new RouteSeries()));
    return series;
  };

  return {
    /** One answered request. `route` is a template or "unmatched"; `method` one of a closed set. */
    request(route: string, method: string, status: number, seconds: number): void {
      seriesOf(route, method).count(status, seconds);
    },
    /**
     * The series of one route template and method, for a caller that counts many requests of it
     * (a hot route keeps its own, skipping two map lookups per request). Ask for it at the first
     * request, as `request` creates series, so /metrics lists no route before it is requested.
     */
    requestSeries(route: string, method: string): { count(status: number, seconds: number): void } {
      return seriesOf(route, method);
    },
    scansIngested(tier: string, endpoint: string, count: number): void {
      if (count > 0) scansIngested.incPair(tier, endpoint, count);
    },
    webhookDelivery(platform: string, outcome: string): void {
      webhookDeliveries.incPair(platform, outcome);
    },
    writerCommit(rows: number, seconds: number): void {
      writerBatchRows.observe([], rows);
      writerCommitSeconds.observe([], seconds);
    },
    addCollector(collect: () => MaybePromise<string>): void {
      collectors.push(collect);
    },
    async render(): Promise<string> {
      const collected = await Promise.all(collectors.map((collect) => collect()));
      let requests = header('svc_http_requests_total', 'counter', 'HTTP requests answered, by route template, method and status class.');
      let latency = header('svc_http_request_duration_seconds', 'histogram', 'Time from receiving a request to its response, by route template and method.');
      for (const [route, byMethod] of routes) {
        for (const [method, series] of byMethod) {
          series.byClass.forEach((count, i) => {
            if (count > 0) requests += `svc_http_requests_total${labelText(['route', 'method', 'status'], [route, method, STATUS_CLASSES[i]!])} ${count}\n`;
          });
          latency += series.latency.render('svc_http_request_duration_seconds', ['route', 'method'], [route, method]);
        }
      }
      return [requests, latency, scansIngested.render(), webhookDeliveries.render(), writerBatchRows.render(), writerCommitSeconds.render(), ...collected].join('');
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
