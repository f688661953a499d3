/** What a Worker of svc's posts back for each request: the request's id, then its result or why it failed. */
export interface WorkerReply {
  id: number;
  ok: boolean;
  result?: unknown;
  error?: string;
}

/**
 * The URL of one of svc's Worker entry points, by its path from `src/`. In the compiled binary each
 * Worker is an entry point of its own (scripts/build.ts), embedded under the virtual root by that
 * path, where every module's URL is the binary's.
 */
export function workerEntry(pathFromSrc: string): string {
  return (Bun.isStandaloneExecutable ? new URL(`./${pathFromSrc}`, `file://${import.meta.dir}/`) : new URL(`../${pathFromSrc}`, import.meta.url)).href;
}

/**
 * Requests to a Worker that answers each with a WorkerReply: each call is a promise, settled by
 * the reply with its id. When the Worker fails (an uncaught error) or is ended, every call waiting
 * and every later one is rejected with why.
 */
export function workerCalls(worker: Worker, name: string) {
  const waiting = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  let nextId = 0;
  let failure: Error | null = null;
  const fail = (error: Error) => {
    failure ??= error;
    for (const call of waiting.values()) call.reject(failure);
    waiting.clear();
  };
  worker.onmessage = ({ data }: MessageEvent<WorkerReply>) => {
    const call = waiting.get(data.id);
    waiting.delete(data.id);
    if (data.ok) call?.resolve(data.result);
    else call?.reject(new Error(data.error));
  };
  worker.onerror = (event) => fail(new Error(`${name}: ${event.message}`));
  return {
    /** Posts `message` with a new id; resolves with the Worker's result for it. */
    call<Result>(message: Record<string, unknown>): Promise<Result> {
      if (failure) return Promise.reject(failure);
      return new Promise((resolve, reject) => {
        const id = nextId++;
        waiting.set(id, { resolve: resolve as (value: unknown) => void, reject });
        worker.postMessage({ ...message, id });
      });
    },
    /** Calls posted and not yet answered. */
    pending: () => waiting.size,
    /** Whether the Worker failed or was ended: every call is refused. */
    failed: () => failure !== null,
    /** Ends the Worker at once; the calls waiting are rejected with `reason`. */
    terminate(reason: string): void {
      fail(new Error(`${name}: ${reason}`));
      worker.terminate();
    },
  };
}

/**
 * The Worker's side of workerCalls for a Worker whose work can be stopped: requests run one at a
 * time, in the order they came, each answered with a WorkerReply. An `abort` request is not queued:
 * it aborts the signal of the request running and of those waiting, so they end at their next step;
 * the requests after it get a fresh signal.
 */
export function answerRequests<Request extends { id: number; op: string }>(self: Worker, run: (request: Request, signal: AbortSignal) => Promise<unknown>): void {
  let stopping = new AbortController();
  let queue: Promise<unknown> = Promise.resolve();
  self.onmessage = ({ data }: MessageEvent<Request>) => {
    if (data.op === 'abort') {
      stopping.abort();
      queue = queue.then(() => {
        stopping = new AbortController();
      });
    }
    queue = queue.then(() =>
      run(data, stopping.signal).then(
        (result) => self.postMessage({ id: data.id, ok: true, result }),
        (error: unknown) => self.postMessage({ id: data.id, ok: false, error: error instanceof Error ? error.message : String(error) }),
      ),
    );
  };
}
