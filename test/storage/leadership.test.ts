import { afterEach, expect, test } from 'bun:test';
import { SQL } from 'bun';
import { postgresLeadership, type Leadership } from '../../src/storage/postgres/leadership.ts';
import { createTestDatabase, describePostgres, type TestDatabase } from '../helpers/postgres.ts';

let database: TestDatabase;
const running: Leadership[] = [];
afterEach(async () => {
  for (const leadership of running.splice(0)) await leadership.stop();
  await database?.drop();
});

/** `count` instances competing for the lead, each with its record of role changes. */
function instances(count: number) {
  return Array.from({ length: count }, () => {
    const changes: boolean[] = [];
    const leadership = postgresLeadership(database.url, (leads) => changes.push(leads));
    running.push(leadership);
    return { leadership, changes };
  });
}

/** Samples the roles every 20 ms until `done` holds (up to `ms`); the most leaders seen at once in any sample. */
async function watch(all: { leadership: Leadership }[], done: () => boolean, ms = 10_000): Promise<number> {
  let most = 0;
  for (let waited = 0; waited < ms; waited += 20) {
    most = Math.max(most, all.filter(({ leadership }) => leadership.leads()).length);
    if (done()) break;
    await Bun.sleep(20);
  }
  return most;
}

const leaders = <Instance extends { leadership: Leadership }>(all: Instance[]) => all.filter(({ leadership }) => leadership.leads());

describePostgres('one leader among the instances (PostgreSQL advisory lock)', () => {
  test('of three instances exactly one leads, and it keeps the lead', async () => {
    database = await createTestDatabase();
    const all = instances(3);
    expect(await watch(all, () => leaders(all).length === 1)).toBe(1);
    const first = leaders(all)[0];
    // Several of the leader's checks and the followers' tries later, nothing changed.
    expect(await watch(all, () => false, 2500)).toBe(1);
    expect(leaders(all)[0]).toBe(first);
  });

  test('a leader that stops hands the lead over: another instance leads within seconds, never two at once', async () => {
    database = await createTestDatabase();
    const all = instances(2);
    await watch(all, () => leaders(all).length === 1);
    const [leader] = leaders(all);
    await leader!.leadership.stop();
    const rest = all.filter((instance) => instance !== leader);
    expect(await watch(rest, () => leaders(rest).length === 1)).toBe(1);
    expect(leaders(rest)).toHaveLength(1);
  });

  test("a leader whose session ends (killed, or the server dropped it) steps down, and one instance leads again", async () => {
    database = await createTestDatabase();
    const all = instances(2);
    await watch(all, () => leaders(all).length === 1);
    const [leader] = leaders(all);
    const admin = new SQL({ url: database.url, max: 1 });
    try {
      const ended = await admin`SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid <> pg_backend_pid() AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`;
      // pg_locks lists the whole server's locks: this test's database's only (other tests' servers may hold theirs).
      expect(ended).toHaveLength(1);
    } finally {
      await admin.close();
    }
    // The old leader learns it at its next check; then whoever takes the lock leads alone.
    expect(await watch(all, () => leader!.changes.includes(false) && leaders(all).length === 1)).toBe(1);
    expect(leader!.changes).toContain(false);
    expect(leaders(all)).toHaveLength(1);
  });
});

describePostgres('stopping the leadership at any moment', () => {
  test('a stop during the first try for the lead (its session being reserved or asking) ends it, holding nothing', async () => {
    database = await createTestDatabase();
    // Stopped at a different point of the first try each time: at once, and a few ms on.
    for (let delay = 0; delay < 12; delay++) {
      const leadership = postgresLeadership(database.url);
      if (delay > 0) await Bun.sleep(delay);
      const stopped = await Promise.race([leadership.stop().then(() => 'stopped'), Bun.sleep(5_000).then(() => 'still stopping after 5 s')]);
      expect({ delay, stopped }).toEqual({ delay, stopped: 'stopped' });
      expect(leadership.leads()).toBe(false);
    }
    // Nothing holds the lock: a new instance takes the lead.
    const [next] = instances(1);
    expect(await watch([next!], () => next!.leadership.leads())).toBe(1);
  });
});
