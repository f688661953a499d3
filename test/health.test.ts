import { afterEach, describe, expect, test } from 'bun:test';
import { WRITE_PROBE_INTERVAL_MS } from '../src/health/routes.ts';
import { fixedClock } from '../src/lib/clock.ts';
import { makeTestApp, type TestApp } from './helpers/app.ts';

let t: TestApp;
afterEach(() => t.close());

const T0 = Date.parse('2026-03-01T00:00:00Z');
const health = async () => {
  const res = await t.request('/healthz');
  return { status: res.status, body: await res.json() };
};
const probeWrittenAt = () => t.database.sqlite.query<{ written_at: number }, []>('SELECT written_at FROM health_probe').get()?.written_at ?? null;

describe('/healthz reports degraded (503) when the database cannot be written', () => {
  test('a database that answers reads but refuses writes is degraded; writable again, ok again', async () => {
    const clock = fixedClock(T0);
    t = await makeTestApp({ clock });
    expect(await health()).toMatchObject({ status: 200, body: { status: 'ok', version: expect.any(String) } });

    t.database.sqlite.exec('PRAGMA query_only = ON'); // the connection can no longer write, as on a read-only file
    clock.advance(WRITE_PROBE_INTERVAL_MS);
    const degraded = await health();
    expect(degraded.status).toBe(503);
    expect(degraded.body).toMatchObject({ status: 'degraded', error: 'database_not_writable', version: expect.any(String) });
    expect(degraded.body.detail).toContain('does not take writes');

    t.database.sqlite.exec('PRAGMA query_only = OFF');
    clock.advance(WRITE_PROBE_INTERVAL_MS);
    expect(await health()).toMatchObject({ status: 200, body: { status: 'ok' } });
  });

  test('a failing write (a full disk) is degraded too', async () => {
    const clock = fixedClock(T0);
    t = await makeTestApp({ clock });
    await health();
    t.database.sqlite.exec("CREATE TRIGGER full_disk BEFORE UPDATE ON health_probe BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END");
    clock.advance(WRITE_PROBE_INTERVAL_MS);
    const degraded = await health();
    expect(degraded.status).toBe(503);
    expect(degraded.body.detail).toContain('database or disk is full');
  });

  test('a flood of health checks writes at most once per interval; in between the last result stands', async () => {
    const clock = fixedClock(T0);
    t = await makeTestApp({ clock });
    await health();
    expect(probeWrittenAt()).toBe(T0);
    for (let i = 0; i < 20; i++) {
      clock.advance(100);
      expect((await health()).status).toBe(200);
    }
    expect(probeWrittenAt()).toBe(T0); // 2 s of checks, no second write
    t.database.sqlite.exec('PRAGMA query_only = ON');
    expect((await health()).status).toBe(200); // the cached result until the next probe is due
    clock.set(T0 + WRITE_PROBE_INTERVAL_MS);
    expect((await health()).status).toBe(503);
  });

  test('a wall clock stepped back (NTP, a restored VM) does not hold the last result for the length of the step', async () => {
    const clock = fixedClock(T0);
    t = await makeTestApp({ clock });
    expect((await health()).status).toBe(200);
    t.database.sqlite.exec('PRAGMA query_only = ON');
    clock.set(T0 - 3_600_000);
    expect((await health()).status).toBe(503);
    expect(probeWrittenAt()).toBe(T0);
    t.database.sqlite.exec('PRAGMA query_only = OFF');
    clock.advance(WRITE_PROBE_INTERVAL_MS);
    expect((await health()).status).toBe(200);
    expect(probeWrittenAt()).toBe(T0 - 3_600_000 + WRITE_PROBE_INTERVAL_MS);
  });
});
