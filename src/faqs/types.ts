// The value types of an FAQ entry, owned here and carried by the database schemas' columns
// (src/storage/sqlite/db/schema/content.ts and its PostgreSQL twin). A leaf: it imports nothing, so the schemas can
// import it without a cycle.

/** What an FAQ is about: a catalogue product, category or content page. */
export const FAQ_ENTITY_TYPES = ['product', 'category', 'page'] as const;
export type FaqEntityType = (typeof FAQ_ENTITY_TYPES)[number];
/** Where an FAQ stands in moderation: only approved entries are shown (the widget and the signals). */
export const FAQ_STATUSES = ['pending', 'approved', 'rejected'] as const;
export type FaqStatus = (typeof FAQ_STATUSES)[number];
