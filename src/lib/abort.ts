/**
 * Why outbound work stopped before it ended. Each is an abort reason of a job's signal
 * (webhooks/queue.ts): a call or wait that sees one stops at once and rejects with it.
 */

/**
 * The work was stopped from outside, not failed: the job is not counted as a failed attempt and is
 * left as it was, for whoever stopped it to decide what becomes of it.
 */
export class Stopped extends Error {
  override name = 'Stopped';
}

/** The server is shutting down: the job's lease is handed back, and another runner (or the next start) takes it up again. */
export class ShuttingDown extends Stopped {
  override name = 'ShuttingDown';
  constructor() {
    super('the server is shutting down');
  }
}

/** The job's lease is no longer the run's (another runner took it once it had ended): the run stops and writes nothing, the job is the other's. */
export class LeaseLost extends Stopped {
  override name = 'LeaseLost';
  constructor() {
    super("the job's lease was taken by another runner");
  }
}

/** The operator stopped a store's work (its removal, a disconnect, a paused sync): its jobs are dropped. */
export class StoreStopped extends Stopped {
  override name = 'StoreStopped';
}

/** The job's time budget ran out: a failed attempt like any other (retried with backoff). */
export class OutOfTime extends Error {
  override name = 'OutOfTime';
  constructor(budgetMs: number) {
    super(`the job's time budget of ${budgetMs} ms ran out`);
  }
}

/** The reason an aborted signal carries, as an Error. */
export const abortReason = (signal: AbortSignal): Error => (signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason)));

/** Waits `ms`, or rejects with the signal's reason as soon as it is aborted. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(abortReason(signal));
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortReason(signal!));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** `work`, or its signal's reason as soon as the signal is aborted (for a wait that cannot be cancelled itself, such as a DNS lookup). */
export function unlessAborted<T>(work: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return work;
  if (signal.aborted) return Promise.reject(abortReason(signal));
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(abortReason(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
