import type { ComponentChildren, TextareaHTMLAttributes } from 'preact';
import { useCallback, useEffect, useId, useRef, useState } from 'preact/hooks';
import { errorSentence, type PageSentences } from './errors.ts';
import { hasNavigated } from './router.ts';

export const formatTime = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' }) : '—');
export const formatNumber = (n: number) => n.toLocaleString();
/** The entries of a list typed one per line or comma-separated (hosts, domains). */
export const splitList = (text: string) =>
  text
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);

/** A value loaded from the API, with its error and a way to load it again. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): { data: T | null; error: unknown; loading: boolean; reload: () => void } {
  const [state, setState] = useState<{ data: T | null; error: unknown; loading: boolean }>({ data: null, error: null, loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => live && setState({ data, error: null, loading: false }),
      (error: unknown) => live && setState({ data: null, error, loading: false }),
    );
    return () => {
      live = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((n) => n + 1), []);
  return { ...state, reload };
}

/** Run an action (a POST, PATCH, DELETE); keeps its error and busy state for the form that runs it. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = useCallback(async <T,>(action: () => Promise<T>): Promise<T | undefined> => {
    setBusy(true);
    setError(null);
    try {
      return await action();
    } catch (failure) {
      setError(failure);
      return undefined;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run, clear: () => setError(null) };
}

export function PageHeader({ title, children }: { title: string; children?: ComponentChildren }) {
  const heading = useRef<HTMLHeadingElement>(null);
  // After a navigation, move focus to the new page's heading so keyboard and screen-reader users start there.
  useEffect(() => {
    if (hasNavigated()) heading.current?.focus({ preventScroll: true });
  }, [title]);
  return (
    <div class="page-header">
      <h1 tabIndex={-1} ref={heading}>
        {title}
      </h1>
      {children ? <div class="page-actions">{children}</div> : null}
    </div>
  );
}

export function Notice({ kind, children }: { kind: 'ok' | 'warn' | 'error'; children: ComponentChildren }) {
  return (
    <div class={`notice ${kind}`} role={kind === 'error' ? 'alert' : 'status'}>
      {children}
    </div>
  );
}

/** An API refusal or a failed check, in the console's words (errors.ts); `sentences` words some codes for this page. */
export function ErrorNotice({ error, sentences }: { error: unknown; sentences?: PageSentences }) {
  if (!error) return null;
  return <Notice kind="error">{errorSentence(error, sentences)}</Notice>;
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="muted" role="status">
      Loading {what}…
    </p>
  );
}

/** A column of a DataTable: its header, and `class` for its cells (`num` right-aligns numbers, `actions` lines up buttons). */
export interface Column {
  label: string;
  class?: string;
  /** The header is for screen readers only (an actions column), and its cells carry no label on narrow screens. */
  hideLabel?: boolean;
}

/** One row: its key and a cell per column; `header` makes the first cell the row's header. */
export interface Row {
  key: string;
  cells: ComponentChildren[];
  header?: boolean;
}

/**
 * A table that fits any width: on narrow screens (console.css) each row becomes a card whose cells
 * are labelled with their column's header, so no column or action ends up off-screen.
 */
export function DataTable({ caption, columns, rows, card = false }: { caption: string; columns: Column[]; rows: Row[]; card?: boolean }) {
  // Between phone and desktop widths a wide table scrolls inside its box: then it says so, and the
  // box takes the keyboard focus so arrow keys scroll it.
  const box = useRef<HTMLDivElement>(null);
  const [overflowing, setOverflowing] = useState(false);
  useEffect(() => {
    const element = box.current!;
    const measure = () => setOverflowing(element.scrollWidth > element.clientWidth + 1);
    const observer = new ResizeObserver(measure);
    observer.observe(element);
    observer.observe(element.querySelector('table')!);
    return () => observer.disconnect();
  }, []);
  return (
    <div class={card ? 'table-wrap card' : 'table-wrap'} ref={box} tabIndex={overflowing ? 0 : undefined} role={overflowing ? 'region' : undefined} aria-label={overflowing ? `${caption} (scrolls sideways)` : undefined}>
      {overflowing ? (
        <p class="table-hint" aria-hidden="true">
          Scroll sideways for more columns →
        </p>
      ) : null}
      <table class="data-table">
        <caption class="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            {columns.map((column) => (
              <th scope="col" class={column.class} key={column.label}>
                {column.hideLabel ? <span class="visually-hidden">{column.label}</span> : column.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.key}>
              {row.cells.map((cell, i) => {
                const column = columns[i]!;
                const label = column.hideLabel ? undefined : column.label;
                // One box per cell, so a narrow screen's label and value are two grid items whatever the value holds.
                const value = <div class="cell">{cell}</div>;
                return row.header && i === 0 ? (
                  <th scope="row" class={column.class} data-label={label} key={column.label}>
                    {value}
                  </th>
                ) : (
                  <td class={column.class} data-label={label} key={column.label}>
                    {value}
                  </td>
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <div class="empty">{children}</div>;
}

export function Badge({ tone = 'neutral', children }: { tone?: 'ok' | 'warn' | 'danger' | 'neutral' | 'accent'; children: ComponentChildren }) {
  return <span class={`badge ${tone}`}>{children}</span>;
}

interface InputProps {
  label: string;
  type?: 'text' | 'password' | 'url' | 'date' | 'email' | 'search';
  placeholder?: string;
  required?: boolean;
  maxLength?: number;
  autoComplete?: string;
  spellcheck?: boolean;
  disabled?: boolean;
  /** Focus the field when it first shows (the one field a page is for, such as sign-in's key). */
  autoFocus?: boolean;
  hint?: ComponentChildren;
  error?: string | null;
  value: string;
  onValue: (value: string) => void;
}

/** The hint below a field, named by the field's aria-describedby as `<id>-hint`. */
function FieldHint({ id, hint }: { id: string; hint?: ComponentChildren }) {
  return hint ? (
    <p class="field-hint" id={`${id}-hint`}>
      {hint}
    </p>
  ) : null;
}

/** A labelled input with its hint and error wired to aria-describedby. */
export function TextField({ label, hint, error, value, onValue, type = 'text', autoFocus = false, ...rest }: InputProps) {
  const id = useId();
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (autoFocus) input.current?.focus();
  }, []);
  const described = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input ref={input} id={id} type={type as 'text'} value={value} onInput={(e) => onValue(e.currentTarget.value)} aria-describedby={described} aria-invalid={error ? 'true' : undefined} {...rest} />
      {error ? (
        <p class="field-error" id={`${id}-error`}>
          {error}
        </p>
      ) : null}
      <FieldHint id={id} hint={hint} />
    </div>
  );
}

export function TextArea({ label, hint, value, onValue, rows = 4, ...rest }: { label: string; hint?: ComponentChildren; value: string; onValue: (v: string) => void; rows?: number } & Omit<TextareaHTMLAttributes<HTMLTextAreaElement>, 'label' | 'value' | 'rows'>) {
  const id = useId();
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <textarea id={id} rows={rows} value={value} onInput={(e) => onValue(e.currentTarget.value)} aria-describedby={hint ? `${id}-hint` : undefined} {...rest} />
      <FieldHint id={id} hint={hint} />
    </div>
  );
}

export function SelectField({ label, value, onValue, options, hint }: { label: string; value: string; onValue: (v: string) => void; options: [string, string][]; hint?: ComponentChildren }) {
  const id = useId();
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <select id={id} value={value} onChange={(e) => onValue(e.currentTarget.value)} aria-describedby={hint ? `${id}-hint` : undefined}>
        {options.map(([optionValue, text]) => (
          <option value={optionValue} key={optionValue}>
            {text}
          </option>
        ))}
      </select>
      <FieldHint id={id} hint={hint} />
    </div>
  );
}

/** Copies `text`; falls back to selecting it where the clipboard is not available (plain http). */
export function CopyButton({ text, label = 'Copy', target }: { text: string; label?: string; target?: () => HTMLElement | null }) {
  const [done, setDone] = useState('');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setDone('Copied');
    } catch {
      const element = target?.();
      if (element) {
        const range = document.createRange();
        range.selectNodeContents(element);
        getSelection()?.removeAllRanges();
        getSelection()?.addRange(range);
      }
      setDone('Selected: press Ctrl+C');
    }
    setTimeout(() => setDone(''), 2500);
  };
  return (
    <span class="copy">
      <button type="button" class="button secondary small" onClick={copy}>
        {label}
      </button>
      <span role="status" class="copy-status">
        {done}
      </span>
    </span>
  );
}

/** A secret the server shows once (a new key or token): prominent, copyable, never stored by the console. */
export function OnceSecret({ title, value, children }: { title: string; value: string; children?: ComponentChildren }) {
  const code = useRef<HTMLElement>(null);
  return (
    <section class="secret" aria-label={title}>
      <h2>{title}</h2>
      <p>Copy it now: it is shown only this once, and svc keeps only a hash of it.</p>
      <div class="secret-row">
        <code ref={code} class="secret-value">
          {value}
        </code>
        <CopyButton text={value} target={() => code.current} />
      </div>
      {children}
    </section>
  );
}

/** A destructive action asked twice in place: the first press arms it (showing `warning`, if any), the second does it. */
export function ConfirmButton({ label, confirm, onConfirm, disabled, warning }: { label: string; confirm: string; onConfirm: () => void; disabled?: boolean; warning?: ComponentChildren }) {
  const [armed, setArmed] = useState(false);
  const warningId = useId();
  if (!armed) {
    return (
      <button type="button" class="button danger small" disabled={disabled} onClick={() => setArmed(true)}>
        {label}
      </button>
    );
  }
  return (
    <span class={warning ? 'confirm warned' : 'confirm'} role="group" aria-label={confirm} aria-describedby={warning ? warningId : undefined}>
      {warning ? (
        <span class="confirm-warning" id={warningId}>
          {warning}
        </span>
      ) : null}
      <button
        type="button"
        class="button danger small"
        ref={(el) => el?.focus()}
        onClick={() => {
          setArmed(false);
          onConfirm();
        }}
      >
        {confirm}
      </button>
      <button type="button" class="button secondary small" onClick={() => setArmed(false)}>
        Cancel
      </button>
    </span>
  );
}

/** Keyset paging: remembers the cursors of the pages before, so Previous works too. */
export function usePager() {
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  const cursor = cursors[cursors.length - 1] ?? null;
  return {
    cursor,
    page: cursors.length,
    next: (nextCursor: string) => setCursors((list) => [...list, nextCursor]),
    previous: () => setCursors((list) => (list.length > 1 ? list.slice(0, -1) : list)),
    reset: () => setCursors([null]),
  };
}

export function Pager({ pager, nextCursor, count }: { pager: ReturnType<typeof usePager>; nextCursor: string | null; count: number }) {
  return (
    <nav class="pager" aria-label="Pages">
      <button type="button" class="button secondary small" disabled={pager.page === 1} onClick={pager.previous}>
        ← Previous
      </button>
      <span class="muted">
        Page {pager.page} · {count} shown
      </span>
      <button type="button" class="button secondary small" disabled={!nextCursor} onClick={() => nextCursor && pager.next(nextCursor)}>
        Next →
      </button>
    </nav>
  );
}

/** A store chooser that remembers the choice in the URL (`?store=`). */
export function StorePicker({ stores, value, onValue }: { stores: { id: string; domain: string; platform: string; status: string }[]; value: string; onValue: (id: string) => void }) {
  return (
    <SelectField
      label="Store"
      value={value}
      onValue={onValue}
      options={stores.map((s) => [s.id, `${s.domain} (${s.platform}${s.status === 'inactive' ? ', inactive' : ''})`])}
    />
  );
}
