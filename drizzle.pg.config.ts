import { defineConfig } from 'drizzle-kit';

// The PostgreSQL twin of drizzle.config.ts, used only by drizzle-kit to generate migrations
// (`npm run db:generate:pg`); the PostgreSQL engine applies them itself (src/storage/postgres/db/migrate.ts).
// Generated from the schema, never written by hand.
export default defineConfig({
  dialect: 'postgresql',
  schema: './src/storage/postgres/db/schema/index.ts',
  out: './drizzle-pg',
});
