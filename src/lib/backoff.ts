/**
 * Exponential backoff with jitter: the `attempt`-th wait (1 for the first retry) is base, 2x base,
 * 4x base ... capped at `maxMs`, less a random part of up to half of it, so retries of many jobs or
 * stores that failed together do not come back together. Never below half of the capped wait.
 */
export function backoffMs(attempt: number, baseMs: number, maxMs: number, random: () => number = Math.random): number {
  const full = Math.min(baseMs * 2 ** Math.max(0, attempt - 1), maxMs);
  return Math.round(full - (random() * full) / 2);
}
