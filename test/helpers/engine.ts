// Which engine this test run composes svc on: SQLite (`npm test`), or PostgreSQL under
// `npm run test:postgres` (SVC_TEST_ENGINE=postgres). A test about SQLite itself says so with
// testSqliteOnly, with the reason, and is skipped (never silently) on PostgreSQL.
import { Database } from 'bun:sqlite';
import { test } from 'bun:test';
import { SQL } from 'bun';
import path from 'node:path';
import { createMigratedTestDatabase, POSTGRES_MODE } from './postgres.ts';

export { POSTGRES_MODE };

/** `test` for one test of SQLite itself; `reason` says why it has no PostgreSQL meaning. */
export function testSqliteOnly(reason: string, label: string, body: () => unknown, timeout?: number): void {
  if (POSTGRES_MODE) test.skip(`${label} (SQLite only: ${reason})`, body as () => void);
  else test(label, body as () => void, timeout);
}

/** How long a server on PostgreSQL may take to hear of another process's commit (issue 31: within 1 s). */
export const HEARD_WITHIN_MS = 1000;

/**
 * A running server's answer once it has heard of a change another process committed: on SQLite the
 * next answer (a request looks at the file's change counter), on PostgreSQL the first that `heard`
 * accepts within HEARD_WITHIN_MS (the change reaches the server by NOTIFY, a few ms after the
 * commit). Answers the last answer asked, whether `heard` accepts it or not.
 */
export async function onceHeard<T>(ask: () => Promise<T>, heard: (answer: T) => boolean): Promise<T> {
  const deadline = performance.now() + (POSTGRES_MODE ? HEARD_WITHIN_MS : 0);
  let answer = await ask();
  while (!heard(answer) && performance.now() < deadline) {
    await Bun.sleep(10);
    answer = await ask();
  }
  return answer;
}

const databases = new Map<string, Promise<string>>();

/**
 * On PostgreSQL, the database of a spawned svc's data directory: the server and the commands of one
 * test name the same data directory, so they share one database (created on first use, migrated).
 * `{}` on SQLite, where the data directory holds the database, and when `given` (the settings the
 * process gets) names a database already.
 */
export async function engineEnv(dataDir: string | undefined, given: Record<string, string> = {}): Promise<Record<string, string>> {
  // Settings that name a database already (a test of several instances on one) are used as they are.
  if (!POSTGRES_MODE || dataDir === undefined || given.SVC_DATABASE_URL !== undefined) return {};
  const key = path.resolve(dataDir);
  let url = databases.get(key);
  if (!url) {
    url = createMigratedTestDatabase().then((created) => created.url);
    databases.set(key, url);
  }
  return { SVC_DATABASE_URL: await url };
}

const INT8 = 20;
const BOOL = 16;

/** A PostgreSQL row as SQLite would read it: bigints (epoch ms, counts) as numbers, booleans as 1 and 0. */
export function asSqliteReads(row: Record<string, unknown>, columns: { name: string; type: number }[] | undefined): Record<string, unknown> {
  for (const { name, type } of columns ?? []) {
    const value = row[name];
    if (type === INT8 && typeof value === 'string') row[name] = Number(value);
    else if (type === BOOL && typeof value === 'boolean') row[name] = value ? 1 : 0;
  }
  return row;
}

/**
 * Plain SQL with `?` placeholders on the database of a data directory that spawned servers and
 * commands use (its SQLite file, or under npm run test:postgres its PostgreSQL database), rows read
 * as SQLite reads them. For a test that looks under a server it spawned, or changes what it left.
 */
export async function queryDataDir(dataDir: string, statement: string, ...params: (string | number | null)[]): Promise<Record<string, unknown>[]> {
  const { SVC_DATABASE_URL: url } = await engineEnv(dataDir);
  if (!url) {
    const db = new Database(path.join(dataDir, 'svc.db'));
    try {
      return db.query(statement).all(...params) as Record<string, unknown>[];
    } finally {
      db.close();
    }
  }
  const sql = new SQL({ url, max: 1 });
  try {
    let n = 0;
    const result = await sql.unsafe(statement.replace(/\?/g, () => `$${++n}`), params);
    return [...result].map((row) => asSqliteReads(row, result.columns));
  } finally {
    await sql.close();
  }
}
