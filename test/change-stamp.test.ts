import { Database } from 'bun:sqlite';
import { afterEach, describe, expect, test } from 'bun:test';
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { migrateDatabase, openDatabase, type AppDatabase } from '../src/storage/sqlite/db/index.ts';
import { createChangeStamp } from '../src/storage/sqlite/change-stamp.ts';
import { tempDir } from './helpers/app.ts';

// The stamp every read cache revalidates against (signals, discovery, public FAQs, key and token
// verification): it must move on every commit, whoever makes it, and stay put otherwise.
let tmp: ReturnType<typeof tempDir> | undefined;
let database: AppDatabase | undefined;
afterEach(() => {
  database?.close();
  database = undefined;
  tmp?.remove();
});

function open(): AppDatabase {
  tmp = tempDir('svc-stamp-');
  database = openDatabase(path.join(tmp.dir, 'svc.sqlite'));
  migrateDatabase(database);
  return database;
}

const insertKey = (db: Database, id: string) =>
  db.run("INSERT INTO api_keys (id, name, key_hash, key_prefix, scopes, allowed_domains, created_at) VALUES (?, '', ?, 'sk_live_x', '[]', '[]', 1)", [id, `hash-${id}`]);

// The stamp reads the WAL-index header from a shared mapping of -shm, or with a pread where it
// cannot be mapped: both must see every commit, whoever makes it.
describe.each([
  ['mapped', true],
  ['read with a pread (the fallback)', false],
])('the database change stamp, the WAL-index header %s', (_, mapped) => {
  test('the change stamp stays put while nothing is committed', () => {
    const { sqlite } = open();
    const stamp = createChangeStamp(sqlite, { mapped });
    const first = stamp();
    sqlite.query('SELECT count(*) FROM api_keys').get();
    expect(stamp()).toBe(first);
    expect(stamp()).toBe(first);
  });

  test("the change stamp moves on this connection's commit", () => {
    const { sqlite } = open();
    const stamp = createChangeStamp(sqlite, { mapped });
    const before = stamp();
    insertKey(sqlite, 'a');
    const after = stamp();
    expect(after).not.toBe(before);
    expect(stamp()).toBe(after);
  });

  test("the change stamp moves on another connection's commit", () => {
    const { sqlite, file } = open();
    const stamp = createChangeStamp(sqlite, { mapped });
    const before = stamp();
    const other = new Database(file);
    insertKey(other, 'b');
    other.close();
    expect(stamp()).not.toBe(before);
  });

  test("the change stamp moves on another process's commit (the CLI's)", () => {
    const { sqlite, file } = open();
    const stamp = createChangeStamp(sqlite, { mapped });
    const before = stamp();
    const script = `const { Database } = require('bun:sqlite'); const db = new Database(${JSON.stringify(file)}); db.run("UPDATE api_keys SET revoked_at = 2"); db.run("INSERT INTO api_keys (id, name, key_hash, key_prefix, scopes, allowed_domains, created_at) VALUES ('c', '', 'hash-c', 'p', '[]', '[]', 1)"); db.close();`;
    const child = Bun.spawnSync([process.execPath, '-e', script]);
    expect(child.exitCode).toBe(0);
    expect(stamp()).not.toBe(before);
  });

});

describe('the database change stamp', () => {
  test('the change stamp of a database without a WAL moves on each commit too', () => {
    const sqlite = new Database(':memory:');
    sqlite.run('CREATE TABLE t (x)');
    const stamp = createChangeStamp(sqlite);
    const before = stamp();
    expect(stamp()).toBe(before);
    sqlite.run('INSERT INTO t VALUES (1)');
    expect(stamp()).not.toBe(before);
    sqlite.close();
  });

  // SQLite marks "this database is open" with a POSIX read lock on byte 128 of the -shm file. POSIX
  // drops every lock a process holds on a file when any descriptor of it closes, so a stamp that
  // opened and closed the file would let another process (the CLI) reinitialise the WAL index
  // under the running server.
  test("the change stamp keeps SQLite's open-database lock on the -shm file", () => {
    const { sqlite } = open();
    const shm = statSync(`${sqlite.filename}-shm`).ino;
    const held = () =>
      readFileSync('/proc/locks', 'utf8')
        .split('\n')
        .some((line) => line.includes(`:${shm} `) && line.split(/\s+/)[4] === String(process.pid) && line.endsWith(' 128 128'));
    expect(held()).toBe(true);
    const stamp = createChangeStamp(sqlite);
    stamp();
    expect(held()).toBe(true);
  });
});

// The mapping is svc's own read-only shared one of -shm (SQLite maps it read-write), made from the
// descriptor the stamp keeps open, and gone once the database is closed.
describe("the change stamp's mapping of the WAL index", () => {
  const stampMappings = (shm: string) =>
    readFileSync('/proc/self/maps', 'utf8')
      .split('\n')
      .filter((line) => line.endsWith(` ${shm}`) && line.split(/\s+/)[1] === 'r--s');

  test('a WAL database has its change stamp read from a shared mapping of -shm, moved by a commit in another process', () => {
    const { sqlite, file } = open();
    const shm = `${sqlite.filename}-shm`;
    expect(stampMappings(shm)).toHaveLength(0);
    const stamp = createChangeStamp(sqlite);
    expect(stampMappings(shm)).toHaveLength(1);
    createChangeStamp(sqlite); // a second stamp of the same connection shares the mapping
    expect(stampMappings(shm)).toHaveLength(1);
    const before = stamp();
    expect(stamp()).toBe(before);
    const script = `const { Database } = require('bun:sqlite'); const db = new Database(${JSON.stringify(file)}); db.run("INSERT INTO api_keys (id, name, key_hash, key_prefix, scopes, allowed_domains, created_at) VALUES ('d', '', 'hash-d', 'p', '[]', '[]', 1)"); db.close();`;
    expect(Bun.spawnSync([process.execPath, '-e', script]).exitCode).toBe(0);
    const after = stamp();
    expect(after).not.toBe(before);
    expect(stamp()).toBe(after);
  });

  test('the fallback maps nothing and reads the header with a pread', () => {
    const { sqlite } = open();
    createChangeStamp(sqlite, { mapped: false });
    expect(stampMappings(`${sqlite.filename}-shm`)).toHaveLength(0);
  });

  test('closing the database unmaps the header, and a stamp read afterwards throws instead of reading it', () => {
    const { sqlite } = open();
    const shm = `${sqlite.filename}-shm`;
    const mapped = createChangeStamp(sqlite);
    const read = createChangeStamp(sqlite, { mapped: false });
    mapped();
    database!.close();
    database = undefined;
    expect(stampMappings(shm)).toHaveLength(0);
    expect(() => mapped()).toThrow('closed');
    expect(() => read()).toThrow('closed');
  });
});
