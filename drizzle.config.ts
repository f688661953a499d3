import { defineConfig } from 'drizzle-kit';

// Used only by drizzle-kit (generate under Bun or Node; migrate/studio under Node with better-sqlite3).
// The app applies the same migrations itself at start (src/storage/sqlite/db/migrate.ts).
export default defineConfig({
  dialect: 'sqlite',
  schema: './src/storage/sqlite/db/schema/index.ts',
  out: './drizzle',
  dbCredentials: { url: process.env.SVC_DATA_DIR ? `${process.env.SVC_DATA_DIR}/svc.db` : './data/svc.db' },
});
