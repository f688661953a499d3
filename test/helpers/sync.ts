import { bearer, type TestApp } from './app.ts';

/** The store as the admin API shows it (with its `sync` state). */
export async function getStore(t: TestApp, storeId: string): Promise<any> {
  const res = await t.request(`/api/v1/admin/stores/${storeId}`, { headers: bearer(await t.keyWith('admin')) });
  return res.json();
}

/**
 * Drive the job queue until the store's sync is no longer running (throttle waits and backoff are
 * real time, so this polls), failing after `timeoutMs`. Returns the store's final sync state.
 */
export async function runSync(t: TestApp, storeId: string, timeoutMs = 15_000, afterTurn?: () => void): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await t.webhooks.runner.runDueJobs();
    afterTurn?.();
    const sync = await t.webhooks.sync.view(storeId);
    if (sync.state !== 'running') return sync;
    if (Date.now() > deadline) throw new Error(`sync still running after ${timeoutMs} ms: ${JSON.stringify(sync)}`);
    await Bun.sleep(5);
  }
}

/**
 * runSync across a step of the wall clock: once `when()` holds (checked after each turn of the
 * queue), Date.now() jumps `stepMs` ahead, as after an NTP correction or a resumed VM, while no
 * more time has passed. Date.now is restored at the end.
 */
export async function runSyncAcrossClockStep(t: TestApp, storeId: string, when: () => boolean, stepMs = 5_000): Promise<any> {
  const wallClock = Date.now;
  let step = 0;
  Date.now = () => wallClock() + step;
  try {
    return await runSync(t, storeId, 15_000, () => {
      if (when()) step = stepMs;
    });
  } finally {
    Date.now = wallClock;
  }
}

/** Every live product of the store through the admin catalogue API, page by page. */
export async function listAllProducts(t: TestApp, storeId: string): Promise<any[]> {
  const all: any[] = [];
  let cursor: string | null = null;
  do {
    const res = await t.request(`/api/v1/admin/stores/${storeId}/products?limit=500${cursor ? `&cursor=${cursor}` : ''}`, { headers: bearer(await t.keyWith('admin')) });
    const page = (await res.json()) as { items: any[]; nextCursor: string | null };
    all.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor);
  return all;
}

/**
 * For webhook suites that count jobs: let the import every new store starts run to its end (the
 * fakes' catalogues are empty then), and clear its finished jobs (and those that connected the
 * stores) from the queue table.
 */
export async function settleInitialSyncs(t: TestApp): Promise<void> {
  for (const store of await t.webhooks.stores.list()) await runSync(t, store.id);
  await t.query("DELETE FROM jobs WHERE (kind LIKE 'catalog-sync.%' OR kind = 'store.connect') AND status = 'done'");
}
