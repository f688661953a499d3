// Catalogue data as the platforms' mappers produce it, for the storage contract tests
// (test/storage/): a store, a product with two variants, and a time past 2^31 ms as every real time is.
import type { ProductData, ProductVariant } from '../../src/catalog/product-data.ts';
import type { StoreRecord } from '../../src/stores/registry.ts';

export const T0 = 1_767_225_600_000; // 2026-01-01

export function variant(id: string, overrides: Partial<ProductVariant> = {}): ProductVariant {
  return { variantId: id, title: `V ${id}`, sku: `SKU-${id}`, barcode: null, mpn: null, price: '10.00', compareAtPrice: null, availability: 'in_stock', options: { Size: id }, image: null, url: null, ...overrides };
}

export function product(productId: string, updatedAt: number, overrides: Partial<ProductData> = {}): ProductData {
  return {
    productId,
    handle: `handle-${productId}`,
    title: `Product ${productId}`,
    descriptionHtml: null,
    price: '10.00',
    availability: 'in_stock',
    sku: null,
    barcode: null,
    mpn: null,
    brand: 'Acme',
    images: ['https://cdn.example/a.jpg'],
    url: `https://shop.example/products/${productId}`,
    options: ['Size'],
    variants: [variant('v1'), variant('v2')],
    updatedAt,
    raw: { id: productId },
    ...overrides,
  };
}

/** An active platform-C store with sealed credentials, created at T0. */
export function store(id: string, overrides: Partial<StoreRecord> = {}): StoreRecord {
  return {
    id,
    platform: 'platform-c',
    domain: `${id}.example`,
    platformRef: `https://${id}.example`,
    currency: 'EUR',
    status: 'active',
    credentialKind: 'rest-keys',
    credentials: `enc:v1:sealed-credentials-of-${id}`,
    webhookSecret: `enc:v1:sealed-secret-of-${id}`,
    hookStatus: 'pending',
    hookError: null,
    hookTopics: [],
    hooksRegisteredAt: null,
    hooksConfirmedAt: null,
    deactivatedAt: null,
    signalsWithdrawnAt: null,
    disconnectedAt: null,
    syncPausedAt: null,
    settings: {},
    createdAt: T0,
    updatedAt: T0,
    ...overrides,
  };
}
