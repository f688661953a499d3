/**
 * Another connection to `file` on another thread takes the write lock and commits a write after
 * `holdMs`. Resolves once it holds the lock, with the promise of its commit: what the test does
 * meanwhile meets a write from outside between its reads and its writes.
 */
export async function foreignWriteInProgress(file: string, holdMs = 300): Promise<{ committed: Promise<void> }> {
  const worker = new Worker(new URL('./foreign-writer-worker.ts', import.meta.url));
  let holding!: () => void;
  const held = new Promise<void>((resolve) => (holding = resolve));
  const committed = new Promise<void>((resolve, reject) => {
    worker.onerror = (event) => reject(new Error(event.message));
    worker.onmessage = ({ data }: MessageEvent<string>) => {
      if (data === 'holding') holding();
      if (data === 'committed') {
        worker.terminate();
        resolve();
      }
    };
  });
  worker.postMessage({ file, holdMs });
  await Promise.race([held, committed]);
  return { committed };
}
