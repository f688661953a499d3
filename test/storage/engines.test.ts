import { afterEach, describe, expect, test } from 'bun:test';
import { ENGINES, type OpenedEngine } from '../helpers/storage.ts';

describe.each(ENGINES)('the storage engine under test ($name)', (engine) => {
  let opened: OpenedEngine;
  afterEach(() => opened.close());

  test('opens migrated: every svc table exists and is empty', async () => {
    opened = await engine.open();
    const count = opened.kind === 'sqlite'
      ? opened.database.sqlite.query<{ n: number }, []>('SELECT count(*) AS n FROM api_keys').get()!.n
      : Number((await opened.client.sql`SELECT count(*) AS n FROM api_keys`)[0].n);
    expect(count).toBe(0);
  });
});
