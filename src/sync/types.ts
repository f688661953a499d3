// The value types of a catalogue sync pass, owned here and carried by the database schemas' columns
// (src/storage/sqlite/db/schema/sync.ts and its PostgreSQL twin). A leaf: it imports nothing, so the schemas can
// import it without a cycle.

/** What a catalogue sync reads from a platform, one phase (and one queue job) each. */
export const SYNC_KINDS = ['products', 'categories', 'pages'] as const;
export type SyncKind = (typeof SYNC_KINDS)[number];

/** Why a sync pass started. */
export type SyncTrigger = 'connect' | 'credentials' | 'manual' | 'schedule';
