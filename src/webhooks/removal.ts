import type { Clock } from '../lib/clock.ts';
import { clientFor, type PlatformSettings } from '../platforms/clients.ts';
import type { DeliveryRecords } from '../storage/stores.ts';
import type { StoreRegistry } from '../stores/registry.ts';
import type { Job, JobContinuation } from './queue.ts';

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
  /** The platform's answer applied with the delivery's outcome, in one transaction. */
  deliveries: Pick<DeliveryRecords, 'settle' | 'duplicatesOf' | 'applyRemoval' | 'refuseRemoval'>;
  stores: StoreRegistry;
  clock: Clock;
  settings: PlatformSettings;
}

export function removalJobs({ deliveries, stores, clock, settings }: RemovalDeps) {
  return {
    [CONFIRM_REMOVAL]: async (job: Job, signal: AbortSignal): Promise<JobContinuation | void> => {
      const removal = job.payload as unknown as RemovalToConfirm;
      const store = await stores.get(job.storeId);
      if (!store || store.status !== 'active') return deliveries.settle(removal.deliveryId, 'ignored_inactive', null);
      const api = clientFor(store, stores.credentialsOf(store), settings, signal);
      // Reconnected through svc's app meanwhile (no API access): the body's own rules, as for any delete of such a store.
      if (!api) return void (await deliveries.applyRemoval(removal.deliveryId, store.id, removal.productId, removal.at, false, clock.now()));
      // A delete of the same product that comes in while the platform is asked is counted as a
      // duplicate of this one: it may be the genuine one, so the answer may then be out of date.
      const duplicatesBefore = await deliveries.duplicatesOf(removal.deliveryId);
      const gone = await api.client.productGone(removal.productId);
      if (gone) return void (await deliveries.applyRemoval(removal.deliveryId, store.id, removal.productId, gone.at ?? removal.at, true, clock.now()));
      // Refused, its key given back; or asked again (at most once per such delete) when one came in.
      if (!(await deliveries.refuseRemoval(removal.deliveryId, duplicatesBefore))) return { runAgainAt: clock.now() };
    },
  };
}
