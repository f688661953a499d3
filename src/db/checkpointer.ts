import type { Database } from 'bun:sqlite';

/** SQLite's own default: the WAL is checkpointed once it holds this many pages. */
const AUTOCHECKPOINT_PAGES = 1000;

/**
 * WAL checkpoints on a Worker thread instead of in the commit that crosses the autocheckpoint
 * threshold: a checkpoint copies the WAL into the database file and syncs it, and done by the
 * request thread it held every request for that copy and fsync. `sqlite` stops checkpointing by
 * itself while the worker runs; the worker's own connection runs a PASSIVE checkpoint every
 * `everyMs`. Durability is unchanged: a commit is durable once its WAL frames are written (WAL,
 * synchronous=NORMAL), whoever copies them later. If the worker cannot start, this throws and
 * `sqlite` checkpoints as before.
 *
 * `script` is src/db/checkpoint-worker.ts resolved by a module in src/ (the server): in the compiled
 * binary every module's import.meta.url is the binary's, and the worker, an entrypoint of its own
 * (scripts/build.ts), sits at db/checkpoint-worker.ts beside it.
 */
export async function startCheckpointer(
  sqlite: Database,
  file: string,
  { script, everyMs = 200, restartPages = 4 * AUTOCHECKPOINT_PAGES }: { script: URL; everyMs?: number; restartPages?: number },
): Promise<{ stop(): Promise<void> }> {
  const worker = new Worker(script.href);
  const reply = () =>
    new Promise<string>((resolve, reject) => {
      worker.onmessage = (event: MessageEvent<string>) => resolve(event.data);
      worker.onerror = (event) => reject(new Error(event.message));
    });
  try {
    const started = reply();
    worker.postMessage({ file, everyMs, restartPages });
    await started;
  } catch (error) {
    worker.terminate();
    throw error;
  }
  sqlite.exec('PRAGMA wal_autocheckpoint = 0');
  return {
    async stop() {
      const stopped = reply();
      worker.postMessage('stop');
      await stopped.catch(() => {});
      worker.terminate();
      sqlite.exec(`PRAGMA wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`);
    },
  };
}
