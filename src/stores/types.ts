// The value types of a connected store, owned here and carried by the database schemas' columns
// (src/storage/sqlite/db/schema/stores.ts and its PostgreSQL twin). A leaf: it imports nothing, so the schemas can
// import it without a cycle.

/** The platforms a store can be connected from. */
export const PLATFORMS = ['platform-a', 'platform-b', 'platform-c'] as const;
export type Platform = (typeof PLATFORMS)[number];

/**
 * How svc authenticates a store's deliveries and reaches its API. Platform A has three modes
 * (own app, svc's app, permanent token alone); B and C one each.
 */
export type CredentialKind = 'own-app' | 'via-app' | 'token-only' | 'api-token' | 'rest-keys';

/**
 * pending: not registered yet; registering: svc is registering them (in the background); not_required:
 * nothing to register (permanent token); platform_managed: svc's app, hooks come with the install;
 * unregistered: svc deleted them when the store was disconnected; unregister_failed: it could not
 * (the topics that may be left are the store's hook topics, the error says why).
 */
export type HookStatus = 'pending' | 'registering' | 'registered' | 'failed' | 'not_required' | 'platform_managed' | 'unregistered' | 'unregister_failed';
