/**
 * The vocabularies of a scan (spec §2.1): what the telemetry payload accepts, what the dashboard
 * filters on and what the console offers. A leaf module, so the console's bundle can import it
 * beside the telemetry payload and the dashboard queries.
 */
export const SCAN_PLATFORMS = ['platform-a', 'platform-b', 'platform-c', 'magento', 'custom', 'unknown'] as const;
export const PAGE_TYPES = ['product', 'collection', 'category', 'page', 'home', 'cart', 'checkout', 'unknown'] as const;
export const GRADES = ['A', 'B', 'C', 'D', 'E', 'F'] as const;
export const PRESENCE_KEYS = ['title', 'description', 'jsonLd', 'openGraph', 'h1', 'canonical', 'robots'] as const;
export type PresenceKey = (typeof PRESENCE_KEYS)[number];
