import { useEffect, useRef } from 'preact/hooks';

/** The first wait before asking again, and again after every change. */
export const POLL_FIRST_MS = 2_000;
/** The longest wait while nothing changes. */
export const POLL_LONGEST_MS = 30_000;

/** The wait before the next poll: the first after a change (`previous` null), else twice the last, up to the longest. */
export function nextPollDelay(previous: number | null): number {
  return previous === null ? POLL_FIRST_MS : Math.min(previous * 2, POLL_LONGEST_MS);
}

/**
 * Load again while `running` (something the page shows is under way: a sync pass, a connection),
 * and only then: 2 s after each load that changed what the page shows (`fingerprint`), twice as
 * long after each that did not, up to 30 s. No timer at all while nothing runs. A load that falls
 * due while the page is hidden waits until it is shown again. `data` is what the last load brought
 * (a new value for each load, changed or not: it is what schedules the next one).
 */
export function usePollWhile(running: boolean, data: unknown, fingerprint: string, reload: () => void): void {
  const last = useRef<{ fingerprint: string; delay: number } | null>(null);
  useEffect(() => {
    if (!running) {
      last.current = null;
      return;
    }
    const delay = nextPollDelay(last.current !== null && last.current.fingerprint === fingerprint ? last.current.delay : null);
    last.current = { fingerprint, delay };
    const whenShown = () => {
      if (document.visibilityState === 'visible') reload();
    };
    const timer = setTimeout(() => {
      if (document.visibilityState === 'visible') reload();
      else document.addEventListener('visibilitychange', whenShown, { once: true });
    }, delay);
    return () => {
      clearTimeout(timer);
      document.removeEventListener('visibilitychange', whenShown);
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [running, data]);
}
