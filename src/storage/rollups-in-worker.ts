import { periodicTask } from '../lib/periodic.ts';
import { answerRequests, workerCalls, workerEntry } from '../lib/worker-calls.ts';
import { ROLL_EVERY_MS } from '../scans/rollups.ts';
import type { ScanRollups } from './scans.ts';

/** A roller run by a Worker of its own: ScanRollups, the Worker's start and its end at once. */
export interface RollupsInWorker extends ScanRollups {
  /** Resolves once the Worker has started and opened the database (a bench measures the folds of a started roller, as the server's is). */
  ready(): Promise<void>;
  /** End the Worker at once, whatever it is doing (its transaction rolls back): a test's teardown. */
  terminate(): void;
}

/**
 * The roller and scan retention of an engine, run by its Worker (`entry`, from `src/`: the engine's
 * scan-roller-worker.ts, which answers with answerRollerRequests below): the request thread
 * never runs a fold. `open` is the Worker's first request (what it opens the database with);
 * `onMessage` hears what the Worker posts besides its replies.
 */
export function rollupsInWorker(entry: string, open: Record<string, unknown>, onMessage?: (data: unknown) => void): RollupsInWorker {
  const worker = new Worker(workerEntry(entry));
  if (onMessage) worker.addEventListener('message', ({ data }) => onMessage(data));
  const calls = workerCalls(worker, 'scan roller');
  const call = (message: Record<string, unknown>) => calls.call<number>(message);
  const opened = call({ ...open, op: 'open' });
  // Ended before it opened (a test's teardown): nothing waits on it then.
  opened.catch(() => {});
  /** Runs `op` in the Worker; `signal` aborting ends it (and anything queued behind it) at its next step. */
  const stoppable = async (op: Record<string, unknown>, signal: AbortSignal): Promise<number> => {
    await opened;
    if (signal.aborted) return 0;
    const result = call(op);
    const abort = () => void calls.call({ op: 'abort' }).catch(() => 0);
    signal.addEventListener('abort', abort, { once: true });
    try {
      return await result;
    } finally {
      signal.removeEventListener('abort', abort);
    }
  };
  const task = periodicTask('scan rollup', (signal) => stoppable({ op: 'fold' }, signal));
  let closed: Promise<void> | null = null;
  const terminate = () => calls.terminate('stopped');

  return {
    ready: (): Promise<void> => opened.then(() => undefined),
    runOnce: task.runOnce,
    retain: (firstKeptDay: number, signal: AbortSignal, batchRows?: number): Promise<number> => stoppable({ op: 'retain', firstKeptDay, batchRows }, signal),
    start: (intervalMs = ROLL_EVERY_MS) => task.start(intervalMs),
    /** Stop the timer, wait for a run in progress, close the Worker's connection and end it (graceful shutdown, before the database closes). */
    stop(): Promise<void> {
      closed ??= (async () => {
        await task.stop();
        await call({ op: 'close' }).catch(() => 0);
        terminate();
      })();
      return closed;
    },
    terminate,
  };
}

/** What a roller's Worker runs (the engine's fold and retention). */
export interface WorkerRoller {
  foldAll(signal: AbortSignal): Promise<number>;
  retain(firstKeptDay: number, signal: AbortSignal, batchRows?: number): Promise<number>;
}

/**
 * The Worker's side of rollupsInWorker: `open` makes the roller from the open request (what
 * rollupsInWorker was given), `close` releases its connection; folds and sweeps run one at a time,
 * and an `abort` ends the one running (and those waiting) at its next step.
 */
export function answerRollerRequests<Open>(self: Worker, open: (request: Open) => WorkerRoller, close: () => unknown): void {
  let roller: WorkerRoller | null = null;
  type Request = Open & { id: number; op: 'open' | 'fold' | 'retain' | 'abort' | 'close'; firstKeptDay?: number; batchRows?: number };
  answerRequests<Request>(self, async (request, signal) => {
    switch (request.op) {
      case 'open':
        roller = open(request);
        return 0;
      case 'fold':
        return roller!.foldAll(signal);
      case 'retain':
        return roller!.retain(request.firstKeptDay!, signal, request.batchRows);
      case 'abort':
        return 0;
      case 'close':
        await close();
        return 0;
    }
  });
}
