import type { Database } from 'bun:sqlite';
import type { CatalogInTransaction } from '../catalog/products.ts';
import type { JobRow } from '../db/schema/index.ts';
import type { Clock } from '../lib/clock.ts';
import { writeTransaction } from '../lib/write-transaction.ts';
import { clientFor, type PlatformSettings } from '../platforms/clients.ts';
import type { StoreRegistry } from '../stores/registry.ts';
import type { JobContinuation } from './queue.ts';

/**
 * The job that applies a delete delivery of a store svc has API access to: the delete topic is a
 * header the platform does not sign, so the product is removed only once the platform says it is
 * gone. The delivery is answered 200 `queued` first (platforms want an answer within seconds).
 */
export const CONFIRM_REMOVAL = 'product.confirm-removal';

export interface RemovalToConfirm {
  productId: string;
  /** The removal's time from the delivery (0: it carries none); the platform's own time wins where its API gives one. */
  at: number;
  /** The delivery's row in the delivery log, which gets the outcome once the platform has answered. */
  deliveryId: string;
}

interface RemovalDeps {
  sqlite: Database;
  stores: StoreRegistry;
  /** Written in one transaction with the delivery's outcome. */
  catalog: CatalogInTransaction;
  clock: Clock;
  settings: PlatformSettings;
}

export function removalJobs({ sqlite, stores, catalog, clock, settings }: RemovalDeps) {
  const settle = sqlite.query<never, [string, string | null, string]>('UPDATE webhook_deliveries SET outcome = ?, reason = ? WHERE id = ?');
  const duplicatesOf = sqlite.query<{ duplicates: number }, [string]>('SELECT duplicates FROM webhook_deliveries WHERE id = ?');
  // A refused removal gives its key back: a later delete of the same product version (platform C's
  // carry no key of their own: dispatch.ts removalKey) is then a delivery of its own, not a duplicate.
  const refuse = sqlite.query<never, [string]>("UPDATE webhook_deliveries SET outcome = 'refused', reason = 'product_not_removed', dedupe_key = NULL WHERE id = ?");
  const seenSince = (deliveryId: string) => duplicatesOf.get(deliveryId)?.duplicates ?? 0;

  /** The platform's answer applied, with the delivery's outcome, in one transaction; a continuation when the answer may be out of date. */
  const apply = writeTransaction(sqlite, (storeId: string, job: RemovalToConfirm, gone: { at: number | null } | null, duplicatesBefore: number): JobContinuation | void => {
    if (gone) {
      const outcome = catalog.remove(storeId, job.productId, gone.at ?? job.at, true);
      settle.run(outcome, null, job.deliveryId);
      return;
    }
    // A delete of the same product came in (counted as a duplicate of this one) while the platform
    // was being asked: it may be the genuine one, so the answer may already be out of date. Asked
    // again at most once per such delete.
    if (seenSince(job.deliveryId) > duplicatesBefore) return { runAgainAt: clock.now() };
    refuse.run(job.deliveryId);
  });

  return {
    [CONFIRM_REMOVAL]: async (job: JobRow, signal: AbortSignal): Promise<JobContinuation | void> => {
      const removal = job.payload as unknown as RemovalToConfirm;
      const store = stores.get(job.storeId);
      if (!store || store.status !== 'active') return void settle.run('ignored_inactive', null, removal.deliveryId);
      const api = clientFor(store, stores.credentialsOf(store), settings, signal);
      // Reconnected through svc's app meanwhile (no API access): the body's own rules, as for any delete of such a store.
      if (!api) return void settle.run(catalog.remove(store.id, removal.productId, removal.at), null, removal.deliveryId);
      const duplicatesBefore = seenSince(removal.deliveryId);
      return apply(store.id, removal, await api.client.productGone(removal.productId), duplicatesBefore);
    },
  };
}
