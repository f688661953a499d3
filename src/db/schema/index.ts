// One file per capability; drizzle-kit reads this index to generate migrations into drizzle/.
export * from './auth.ts';
export * from './scans.ts';
