import { afterEach, describe, expect, test } from 'bun:test';
import { WRITE_PROBE_INTERVAL_MS } from '../src/health/routes.ts';
import { fixedClock } from '../src/lib/clock.ts';
import { makeTestApp, type TestApp } from './helpers/app.ts';
import { failWritesTo } from './helpers/failing-commits.ts';

let t: TestApp;
afterEach(async () => {
  await t.close();
});

const T0 = Date.parse('2026-03-01T00:00:00Z');
const health = async () => {
  const res = await t.request('/healthz');
  return { status: res.status, body: await res.json() };
};
const probeWrittenAt = async () => ((await t.query('SELECT written_at FROM health_probe'))[0]?.written_at as number | undefined) ?? null;

/**
 * The database stops taking writes, as on a read-only file: SQLite's connection turns read-only; on
 * PostgreSQL the probe's table refuses writes as a read-only transaction would. Returns the undo.
 */
async function readOnly(): Promise<() => Promise<void>> {
  if (t.config.postgres) return failWritesTo(t, 'health_probe', 'cannot execute UPDATE in a read-only transaction');
  t.database.sqlite.exec('PRAGMA query_only = ON');
  return async () => void t.database.sqlite.exec('PRAGMA query_only = OFF');
}

describe('/healthz reports degraded (503) when the database cannot be written', () => {
  test('a database that answers reads but refuses writes is degraded; writable again, ok again', async () => {
    const clock = fixedClock(T0);
    t = await makeTestApp({ clock });
    expect(await health()).toMatchObject({ status: 200, body: { status: 'ok', version: expect.any(String) } });

    const writable = await readOnly();
    clock.advance(WRITE_PROBE_INTERVAL_MS);
    const degraded = await health();
    expect(degraded.status).toBe(503);
    expect(degraded.body).toMatchObject({ status: 'degraded', error: 'database_not_writable', version: expect.any(String) });
    expect(degraded.body.detail).toContain('does not take writes');

    await writable();
    clock.advance(WRITE_PROBE_INTERVAL_MS);
    expect(await health()).toMatchObject({ status: 200, body: { status: 'ok' } });
  });

  test('a failing write (a full disk) is degraded too', async () => {
    const clock = fixedClock(T0);
    t = await makeTestApp({ clock });
    await health();
    await failWritesTo(t, 'health_probe', 'database or disk is full');
    clock.advance(WRITE_PROBE_INTERVAL_MS);
    const degraded = await health();
    expect(degraded.status).toBe(503);
    expect(degraded.body.detail).toContain('database or disk is full');
  });

  test('a flood of health checks writes at most once per interval; in between the last result stands', async () => {
    const clock = fixedClock(T0);
    t = await makeTestApp({ clock });
    await health();
    expect(await probeWrittenAt()).toBe(T0);
    for (let i = 0; i < 20; i++) {
      clock.advance(100);
      expect((await health()).status).toBe(200);
    }
    expect(await probeWrittenAt()).toBe(T0); // 2 s of checks, no second write
    await readOnly();
    expect((await health()).status).toBe(200); // the cached result until the next probe is due
    clock.set(T0 + WRITE_PROBE_INTERVAL_MS);
    expect((await health()).status).toBe(503);
  });

  test('a wall clock stepped back (NTP, a restored VM) does not hold the last result for the length of the step', async () => {
    const clock = fixedClock(T0);
    t = await makeTestApp({ clock });
    expect((await health()).status).toBe(200);
    const writable = await readOnly();
    clock.set(T0 - 3_600_000);
    expect((await health()).status).toBe(503);
    expect(await probeWrittenAt()).toBe(T0);
    await writable();
    clock.advance(WRITE_PROBE_INTERVAL_MS);
    expect((await health()).status).toBe(200);
    expect(await probeWrittenAt()).toBe(T0 - 3_600_000 + WRITE_PROBE_INTERVAL_MS);
  });
});
