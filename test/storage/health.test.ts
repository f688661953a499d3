import { describe, expect, test } from 'bun:test';
import type { DatabaseHealth } from '../../src/storage/health.ts';
import { postgresDatabaseHealth } from '../../src/storage/postgres/health.ts';
import { openPostgresClient } from '../../src/storage/postgres/client.ts';
import { sqliteDatabaseHealth } from '../../src/storage/sqlite/health.ts';
import { closedAfterEachTest, ENGINES, query, type OpenedEngine } from '../helpers/storage.ts';

const { open, closeAfter } = closedAfterEachTest();

describe.each(ENGINES)('the database health ($name)', (engine) => {
  let opened: OpenedEngine;
  const healthOf = async (): Promise<DatabaseHealth> => {
    opened = await open(engine);
    if (opened.kind === 'sqlite') return sqliteDatabaseHealth(opened.database);
    // A pool of its own, named as an instance's, so its connections can be told from the test's.
    const client = openPostgresClient(opened.url, { max: 3, applicationName: 'svc health-test-1a2b3c' });
    closeAfter(() => client.close());
    return postgresDatabaseHealth(client);
  };

  test('a ping answers, and a probe write commits the one probe row (rewritten, never added)', async () => {
    const health = await healthOf();
    expect(health.engine).toBe(engine.name);
    await health.ping();
    await health.probeWrite(1_000);
    await health.probeWrite(2_000);
    const rows = await query(opened, 'SELECT id, written_at FROM health_probe');
    expect(rows.map((row) => [Number(row.id), Number(row.written_at)])).toEqual([[1, 2_000]]);
  });

  test('the figures count the jobs by status, every status present, and name the engine', async () => {
    const health = await healthOf();
    for (const [id, status] of [['j1', 'queued'], ['j2', 'queued'], ['j3', 'dead']] as const) {
      await query(opened, "INSERT INTO jobs (id, kind, store_id, payload, status, run_at, created_at) VALUES (?, 'test', 'st_1', '{}', ?, 0, 0)", id, status);
    }
    const figures = await health.figures();
    expect(figures.engine).toBe(engine.name);
    expect(figures.jobs).toEqual({ queued: 2, running: 0, done: 0, dead: 1 });
    if (figures.engine === 'sqlite') {
      expect(figures.databaseBytes).toBeGreaterThan(0);
      expect(figures.walBytes).toBeGreaterThanOrEqual(0);
    } else {
      // Its own query's connection is open (and not counted busy: that is the figures' own work).
      expect(figures.pool).toEqual({ max: 3, open: expect.any(Number), busy: 0 });
      expect(figures.pool.open).toBeGreaterThanOrEqual(1);
      expect(figures.pool.open).toBeLessThanOrEqual(3);
    }
  });
});
