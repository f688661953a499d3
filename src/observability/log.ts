/**
 * The process log: one JSON object per line on stderr (stdout carries only a command's result, such
 * as the "listening" line). Lines are filtered by level and paced by a line budget, so no client can
 * make svc write more than `linesPerSecond` lines (a few tens of KB) per second however it floods.
 */

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
type LogLevel = (typeof LOG_LEVELS)[number];
export const ACCESS_LOG_MODES = ['all', 'errors', 'off'] as const;
type AccessLogMode = (typeof ACCESS_LOG_MODES)[number];

export interface LogSettings {
  /** Lines below this level are not written. */
  level: LogLevel;
  /** Which requests get an access line: every one, status >= 400, or none (5xx are logged in every mode). */
  access: AccessLogMode;
  /** Sustained lines per second (and burst) of each budget; lines over it are counted, not written. */
  linesPerSecond: number;
}

const RANK: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };

type Fields = Record<string, unknown>;

/**
 * Lines over budget are dropped and counted; the next line written is preceded by one summary line
 * naming how many were dropped (also written at shutdown by `flush()`). Error-level lines draw from a
 * budget of their own, so a flood of client errors never crowds out a server error.
 */
export function createLogger(settings: LogSettings, write: (text: string) => void = (text) => void process.stderr.write(text), now: () => number = Date.now) {
  const minRank = RANK[settings.level];
  const rate = settings.linesPerSecond;
  const budgets = { normal: { tokens: rate, at: now() }, error: { tokens: rate, at: now() } };
  let suppressed = 0;
  let suppressedTotal = 0;

  function admit(level: LogLevel): boolean {
    const budget = level === 'error' ? budgets.error : budgets.normal;
    const t = now();
    budget.tokens = Math.min(rate, budget.tokens + ((t - budget.at) * rate) / 1000);
    budget.at = t;
    if (budget.tokens >= 1) {
      budget.tokens -= 1;
      return true;
    }
    suppressed++;
    suppressedTotal++;
    return false;
  }

  /** The summary of the lines dropped since the last line written, or ''. */
  function takeSummary(ts: string): string {
    if (suppressed === 0) return '';
    const line = `${JSON.stringify({ ts, level: 'warn', msg: 'log lines suppressed', suppressed, linesPerSecond: rate })}\n`;
    suppressed = 0;
    return line;
  }

  function emit(level: LogLevel, msg: string, fields: Fields): void {
    const ts = new Date(now()).toISOString();
    write(`${takeSummary(ts)}${JSON.stringify({ ts, level, msg, ...fields })}\n`);
  }

  return {
    settings,
    /** True when a line of this level would be written at all (before the budget). */
    enabled: (level: LogLevel) => RANK[level] >= minRank,
    log(level: LogLevel, msg: string, fields: Fields = {}): void {
      if (RANK[level] >= minRank && admit(level)) emit(level, msg, fields);
    },
    /**
     * An access line, built only once it is admitted: `fields()` runs for at most the budget's lines
     * per second, so a flood costs one counter increment per request.
     */
    access(status: number, fields: () => Fields): void {
      const level: LogLevel = status >= 500 ? 'error' : status >= 400 ? 'warn' : 'info';
      if (status < 500 && (settings.access === 'off' || (settings.access === 'errors' && status < 400))) return;
      if (RANK[level] >= minRank && admit(level)) emit(level, 'request', fields());
    },
    /** Lines dropped by the budget since start (also in /metrics). */
    get suppressedTotal(): number {
      return suppressedTotal;
    },
    /** Report lines still counted as suppressed (at shutdown). */
    flush(): void {
      const summary = takeSummary(new Date(now()).toISOString());
      if (summary) write(summary);
    },
  };
}

export type Logger = ReturnType<typeof createLogger>;
