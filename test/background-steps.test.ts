import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import { statSync } from 'node:fs';
import path from 'node:path';
import { startCheckpointer } from '../src/db/checkpoint.ts';
import { openDatabase, type AppDatabase } from '../src/db/index.ts';
import { inBatches, periodicTask, STEP_BUDGET_MS } from '../src/lib/periodic.ts';
import { tempDir } from './helpers/app.ts';

/** A clock that moves only when a batch "works": each row costs `msPerRow`. */
function timedBatches(total: number, msPerRow: number) {
  let now = 0;
  let left = total;
  const sizes: number[] = [];
  const batch = (rows: number) => {
    sizes.push(rows);
    const done = Math.min(rows, left);
    left -= done;
    now += done * msPerRow;
    return done;
  };
  return { batch, sizes, now: () => now };
}

describe('background steps', () => {
  test('batch sizes follow the time a batch took, so each step stays near the budget', async () => {
    const cheap = timedBatches(10_000, 0.001);
    expect(await inBatches(cheap.batch, 250, undefined, cheap.now)).toBe(10_000);
    // Cheap rows: doubling from 8 up to the cap, never above it.
    expect(cheap.sizes.slice(0, 6)).toEqual([8, 16, 32, 64, 128, 250]);
    expect(Math.max(...cheap.sizes)).toBeLessThanOrEqual(250);

    const costly = timedBatches(100, 1);
    expect(await inBatches(costly.batch, 250, undefined, costly.now)).toBe(100);
    // 1 ms a row: after the first step, STEP_BUDGET_MS rows a step.
    expect(costly.sizes.slice(1, 4)).toEqual([STEP_BUDGET_MS, STEP_BUDGET_MS, STEP_BUDGET_MS]);

    const slow = timedBatches(20, 50);
    expect(await inBatches(slow.batch, 250, undefined, slow.now)).toBe(20);
    // A row slower than the budget: one row a step, never zero.
    expect(slow.sizes.slice(1)).toEqual(Array(slow.sizes.length - 1).fill(1));
  });

  test('a short batch ends the run with the total', async () => {
    const few = timedBatches(5, 0.01);
    expect(await inBatches(few.batch, 250, undefined, few.now)).toBe(5);
    expect(few.sizes).toEqual([8]);
  });
});

describe('stopping background work', () => {
  test('stop() ends the run in progress at its next step, and the next run goes on from there', async () => {
    let left = 1000;
    const task = periodicTask('test', (signal) =>
      inBatches((rows) => {
        const done = Math.min(rows, left);
        left -= done;
        return done;
      }, 10, signal),
    );
    task.start(60_000);
    await task.stop();
    // A 1000-row backlog in steps of at most 10 rows: stopped long before its end.
    expect(left).toBeGreaterThan(900);
    const stoppedAt = left;
    expect(await task.runOnce()).toBe(stoppedAt);
    expect(left).toBe(0);
  });
});

describe('WAL checkpointer', () => {
  let tmp: ReturnType<typeof tempDir>;
  let database: AppDatabase;
  beforeEach(() => {
    tmp = tempDir('svc-checkpoint-');
    database = openDatabase(path.join(tmp.dir, 'svc.db'));
  });
  afterEach(() => {
    database.close();
    tmp.remove();
  });
  const autocheckpoint = () => (database.sqlite.query('PRAGMA wal_autocheckpoint').get() as { wal_autocheckpoint: number }).wal_autocheckpoint;

  const written = 60 * 20 * 4000;
  /** Past the 1000 pages at which the connection would have checkpointed inside a COMMIT. */
  const writeWalPastAutocheckpoint = () => {
    database.sqlite.exec('CREATE TABLE t (v BLOB)');
    const insert = database.sqlite.prepare('INSERT INTO t (v) VALUES (?)');
    for (let i = 0; i < 60; i++) database.sqlite.transaction(() => {
      for (let j = 0; j < 20; j++) insert.run(new Uint8Array(4000));
    })();
  };

  test('while it runs the server connection never checkpoints; stopping it checkpoints once more and restores the default', async () => {
    // An interval far beyond the test, so only the server connection could have copied the WAL.
    const checkpointer = await startCheckpointer(database.sqlite, database.file, () => {}, 3_600_000);
    expect(autocheckpoint()).toBe(0);
    writeWalPastAutocheckpoint();
    // The rows live in the WAL until a checkpoint copies them into the database file.
    expect(statSync(database.file).size).toBeLessThan(written);
    expect(checkpointer.checkpoints).toBe(0);
    await checkpointer.stop();
    expect(checkpointer.checkpoints).toBe(1);
    expect(statSync(database.file).size).toBeGreaterThanOrEqual(written);
    expect(autocheckpoint()).toBe(1000);
  });

  test('the Worker copies the WAL into the database file on its interval', async () => {
    const checkpointer = await startCheckpointer(database.sqlite, database.file, () => {}, 20);
    writeWalPastAutocheckpoint();
    const copied = () => statSync(database.file).size >= written && checkpointer.checkpoints > 0;
    for (let waited = 0; !copied() && waited < 5000; waited += 20) await Bun.sleep(20);
    expect(statSync(database.file).size).toBeGreaterThanOrEqual(written);
    expect(checkpointer.checkpoints).toBeGreaterThan(0);
    await checkpointer.stop();
  });
});
