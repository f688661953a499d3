import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { periodName, tickLabel, timeTicks, type Interval } from './time-axis.ts';

export interface ChartSeries {
  label: string;
  values: (number | null)[];
  /** Bars for counts, a line for rates and averages. */
  kind: 'bars' | 'line';
  /** A second y axis on the right (for a 0–100 score beside counts). */
  rightAxis?: boolean;
  format?: (value: number) => string;
  /** Bars: a colour per point (CSS custom property names, such as a grade's badge colour), else the palette's. */
  colors?: string[];
}

export interface ChartProps {
  title: string;
  /** x values: the buckets' starts in epoch seconds for time charts, else 0..n-1 with `categories` as their labels. */
  x: number[];
  categories?: string[];
  /** Time charts: what one bucket is (a UTC day or month), which names the axis labels and the points. */
  interval?: Interval;
  series: ChartSeries[];
  height?: number;
}

const PALETTE = ['--chart-1', '--chart-2', '--chart-3', '--chart-4'];
const cssVar = (name: string) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();
const plain = (value: number) => value.toLocaleString();
/** The smallest distance between neighbouring x values (a day or a month), one day when there is one point. */
function step(x: number[]): number {
  const smallest = x.slice(1).reduce((min, value, i) => Math.min(min, value - x[i]!), Infinity);
  return Number.isFinite(smallest) ? smallest : 86_400;
}

/** The label of point `i` on the x axis. */
function xLabel(props: ChartProps, i: number): string {
  const value = props.x[i]!;
  return props.categories ? (props.categories[i] ?? '') : periodName(value, props.interval ?? 'day');
}

/** A small tooltip that follows the cursor: the point's label and each series' value. */
function tooltip(props: ChartProps): uPlot.Plugin {
  let tip: HTMLDivElement;
  return {
    hooks: {
      init: (u) => {
        tip = document.createElement('div');
        tip.className = 'chart-tip';
        tip.setAttribute('role', 'tooltip');
        tip.hidden = true;
        u.over.appendChild(tip);
      },
      setCursor: (u) => {
        const i = u.cursor.idx;
        if (i === null || i === undefined || u.cursor.left === undefined || u.cursor.left < 0) {
          tip.hidden = true;
          return;
        }
        tip.replaceChildren();
        const head = document.createElement('strong');
        head.textContent = xLabel(props, i);
        tip.appendChild(head);
        props.series.forEach((s) => {
          const line = document.createElement('div');
          const value = s.values[i];
          line.textContent = `${s.label}: ${value === null || value === undefined ? '—' : (s.format ?? plain)(value)}`;
          tip.appendChild(line);
        });
        tip.hidden = false;
        const left = Math.min(u.cursor.left + 12, u.over.clientWidth - tip.offsetWidth - 4);
        tip.style.left = `${Math.max(0, left)}px`;
        tip.style.top = `${Math.max(0, (u.cursor.top ?? 0) - tip.offsetHeight - 8)}px`;
      },
    },
  };
}

function options(props: ChartProps, width: number): uPlot.Options {
  const fg = cssVar('--muted');
  const grid = cssVar('--border');
  const categorical = props.categories !== undefined;
  const hasRight = props.series.some((s) => s.rightAxis);
  const axisFont = '12px system-ui, sans-serif';
  const interval = props.interval ?? 'day';
  const bars = (colors?: string[]) =>
    uPlot.paths.bars!({ size: [0.6, 48], align: 0, ...(colors ? { disp: { fill: { unit: 3, values: () => colors.map((name) => cssVar(name)) } } } : {}) });
  return {
    width,
    height: props.height ?? 240,
    padding: [12, hasRight ? 8 : 16, 0, 0],
    cursor: { points: { size: 8 }, drag: { x: false, y: false } },
    legend: { live: false },
    scales: {
      // Half a step of room at each end, so the first and last bars are drawn whole.
      x: categorical ? { time: false, range: (_u, min, max) => [min - 0.5, max + 0.5] } : { time: true, range: (_u, min, max) => [min - step(props.x) / 2, max + step(props.x) / 2] },
      y: { range: (_u, _min, max) => [0, Math.max(1, max) * 1.1] },
      ...(hasRight ? { score: { range: [0, 100] as [number, number] } } : {}),
    },
    axes: [
      {
        stroke: fg,
        font: axisFont,
        grid: { show: false },
        ticks: { stroke: grid },
        // Narrow charts turn long category names so they do not run into each other. Time axes
        // label the buckets' own starts (time-axis.ts), so each bar sits on its period's label.
        ...(categorical
          ? { splits: () => props.x, values: (_u: uPlot, splits: number[]) => splits.map((i) => props.categories![i] ?? ''), ...(width < 520 ? { rotate: -35, size: 64 } : {}) }
          : {
              splits: (u: uPlot, _axis: number, min: number, max: number) => timeTicks(props.x, interval, u.bbox.width / uPlot.pxRatio).filter((s) => s >= min && s <= max),
              values: (_u: uPlot, splits: number[]) => splits.map((s) => tickLabel(s, interval)),
            }),
      },
      { stroke: fg, font: axisFont, grid: { stroke: grid, width: 1 }, ticks: { show: false }, size: 56, values: (_u, splits) => splits.map((v) => (Number.isInteger(v) ? v.toLocaleString() : '')) },
      ...(hasRight ? [{ scale: 'score', side: 1, stroke: fg, font: axisFont, grid: { show: false }, ticks: { show: false }, size: 44 } as uPlot.Axis] : []),
    ],
    series: [
      { label: categorical ? 'Category' : 'Date', value: (_u, v) => (v === null ? '—' : categorical ? (props.categories![v] ?? '') : periodName(v, interval)) },
      ...props.series.map((s, i) => {
        const color = cssVar(PALETTE[i % PALETTE.length]!);
        return {
          label: s.label,
          scale: s.rightAxis ? 'score' : 'y',
          stroke: color,
          width: s.kind === 'line' ? 2 : 0,
          fill: s.kind === 'bars' ? color : undefined,
          paths: s.kind === 'bars' ? bars(s.colors) : undefined,
          points: { show: s.kind === 'line' && props.x.length < 40 },
          spanGaps: true,
          value: (_u: uPlot, v: number | null) => (v === null ? '—' : (s.format ?? plain)(v)),
        } satisfies uPlot.Series;
      }),
    ],
    plugins: [tooltip(props)],
  };
}

/**
 * A uPlot chart with axes, a legend naming each series and a tooltip, redrawn when its data, its
 * width or the colour scheme changes. The same numbers are in a table below it for screen readers
 * and keyboard users.
 */
export function Chart(props: ChartProps) {
  const holder = useRef<HTMLDivElement>(null);
  const data = JSON.stringify([props.x, props.categories, props.interval, props.series.map((s) => [s.label, s.values, s.colors])]);
  useEffect(() => {
    const element = holder.current!;
    let plot: uPlot | null = null;
    const draw = () => {
      plot?.destroy();
      plot = new uPlot(options(props, Math.max(element.clientWidth, 240)), [props.x, ...props.series.map((s) => s.values)] as uPlot.AlignedData, element);
    };
    draw();
    const resize = new ResizeObserver(() => plot?.setSize({ width: Math.max(element.clientWidth, 240), height: props.height ?? 240 }));
    resize.observe(element);
    const scheme = matchMedia('(prefers-color-scheme: dark)');
    scheme.addEventListener('change', draw);
    return () => {
      resize.disconnect();
      scheme.removeEventListener('change', draw);
      plot?.destroy();
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [data]);
  return (
    <figure class="chart card">
      <figcaption>{props.title}</figcaption>
      <div ref={holder} class="chart-canvas" role="img" aria-label={`${props.title} chart; the data table below has the same numbers`} />
      <details class="chart-data">
        <summary>Data table</summary>
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">{props.categories ? 'Category' : 'Period'}</th>
                {props.series.map((s) => (
                  <th scope="col" key={s.label}>
                    {s.label}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {props.x.map((_, i) => (
                <tr key={i}>
                  <th scope="row">{xLabel(props, i)}</th>
                  {props.series.map((s) => (
                    <td key={s.label}>{s.values[i] === null || s.values[i] === undefined ? '—' : (s.format ?? plain)(s.values[i]!)}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}
