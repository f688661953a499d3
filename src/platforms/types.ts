import type { Availability } from '../db/schema/index.ts';

/** Catalogue data of one product as a platform describes it, already mapped to svc's fields. */
export interface ProductData {
  productId: string;
  handle: string | null;
  title: string;
  descriptionHtml: string | null;
  price: string | null;
  availability: Availability | null;
  sku: string | null;
  gtin: string | null;
  brand: string | null;
  images: string[];
  url: string | null;
  /** The platform's modification time, epoch ms. */
  updatedAt: number;
  raw: unknown;
}

/** What a verified delivery asks svc to do, independent of the platform it came from. */
export type WebhookEvent =
  | { kind: 'product.upsert'; product: ProductData }
  | { kind: 'product.remove'; productId: string; at: number }
  /** Platform B sends only the id: the product is fetched later through the job queue. */
  | { kind: 'product.fetch'; productId: string }
  | { kind: 'store.uninstalled' }
  | { kind: 'privacy' }
  | { kind: 'order'; orderId: string; status: string | null }
  | { kind: 'unhandled' };

/** Hook registration outcome: the topics now registered with the platform. */
export interface HookRegistration {
  topics: string[];
}
