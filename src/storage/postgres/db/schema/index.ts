// The PostgreSQL schema, one file per capability like the SQLite one (src/storage/sqlite/db/schema/), whose twin it
// is; drizzle-kit reads this index to generate migrations into drizzle-pg/ (drizzle.pg.config.ts).
export * from './auth.ts';
export * from './stores.ts';
export * from './catalog.ts';
export * from './webhooks.ts';
export * from './scans.ts';
export * from './scan-rollups.ts';
export * from './content.ts';
export * from './console.ts';
export * from './health.ts';
export * from './sync.ts';
