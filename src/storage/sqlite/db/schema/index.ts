// One file per capability; drizzle-kit reads this index to generate migrations into drizzle/.
export * from './auth.ts';
export * from './stores.ts';
export * from './catalog.ts';
export * from './webhooks.ts';
export * from './scans.ts';
export * from './content.ts';
export * from './console.ts';
export * from './health.ts';
export * from './sync.ts';
