import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createApp } from '../../src/app.ts';
import { createKeyStore, type Scope } from '../../src/auth/keys.ts';
import { createLeadStore } from '../../src/auth/leads.ts';
import { loadConfig, type Config, type Env } from '../../src/config.ts';
import { migrateDatabase, openDatabase, type AppDatabase } from '../../src/db/index.ts';
import { systemClock, type Clock } from '../../src/lib/clock.ts';
import { buildWidget, type WidgetBundle } from '../../src/widget/bundle.ts';

let widget: Promise<WidgetBundle> | null = null;
/** The widget is built once per test process; it does not depend on the app's state. */
export const testWidget = () => (widget ??= buildWidget());

export function tempDir(prefix = 'svc-test-'): { dir: string; remove(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface TestApp {
  app: ReturnType<typeof createApp>;
  config: Config;
  database: AppDatabase;
  clock: Clock;
  keys: ReturnType<typeof createKeyStore>;
  leads: ReturnType<typeof createLeadStore>;
  /** Send a request through the app's HTTP surface. `path` is relative to http://localhost. */
  request(path: string, init?: RequestInit): Promise<Response>;
  /** A fresh raw key with these scopes. */
  keyWith(...scopes: Scope[]): string;
  close(): void;
}

/** An app over a real SQLite file in a temp directory, migrated, with an optional fixed clock. */
export async function makeTestApp(options: { env?: Env; clock?: Clock } = {}): Promise<TestApp> {
  const tmp = tempDir();
  const config = loadConfig({ 'data-dir': tmp.dir }, options.env ?? {});
  const database = openDatabase(config.databaseFile);
  migrateDatabase(database);
  const clock = options.clock ?? systemClock;
  const app = createApp({ config, database, widget: await testWidget(), clock });
  const keys = createKeyStore(database.db, clock);
  return {
    app,
    config,
    database,
    clock,
    keys,
    leads: createLeadStore(database.db, clock),
    request: (p, init) => app.handle(new Request(`http://localhost${p}`, init)),
    keyWith: (...scopes) => keys.create({ scopes, name: 'test' }).key,
    close: () => {
      database.close();
      tmp.remove();
    },
  };
}

export function jsonRequest(method: string, body: unknown, headers: Record<string, string> = {}): RequestInit {
  return { method, body: JSON.stringify(body), headers: { 'content-type': 'application/json', ...headers } };
}

export const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
