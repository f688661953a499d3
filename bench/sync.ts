// Catalogue sync: imports N platform-C products (default 50,000) from a local fake site (its own process) over real HTTP into
// a real SQLite file, and prints products/s and the worst event-loop stall (bench/lib/holds.ts: the
// longest the loop was held, less the time other processes had the CPU; and the most CPU time the
// thread spent between two turns of the loop), each against a baseline run
// in the same process: reading the same pages over HTTP without writing them.
//   npx bun bench/sync.ts [N]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config.ts';
import { startCheckpointer } from '../src/storage/sqlite/db/checkpoint.ts';
import { migrateDatabase, openDatabase } from '../src/storage/sqlite/db/index.ts';
import { systemClock } from '../src/lib/clock.ts';
import { createEgress } from '../src/platforms/egress.ts';
import { platformCClient } from '../src/platforms/platform-c.ts';
import { parseCredentials } from '../src/stores/credentials.ts';
import { createWebhookServices } from '../src/webhooks/services.ts';
import { sqliteStorage } from '../src/storage/sqlite/index.ts';
import { writePause } from '../src/storage/sqlite/write-pause.ts';
import { spawnServer } from './lib/harness.ts';
import { holdsRow, measureHolds } from './lib/holds.ts';

const total = Number(process.argv[2] ?? 50_000);
const keys = { consumerKey: 'ck_bench', consumerSecret: 'cs_bench' };

// The site, in a process of its own (bench/sync-site.ts): its work is not svc's.
const { url: siteUrl, proc: site } = await spawnServer(['bench/sync-site.ts', String(total)]);

// Baseline: the same pages over the same HTTP, parsed, not written.
// The site is on loopback: a private target, allowed here as SVC_ALLOW_PRIVATE_TARGETS=1 allows it below.
const client = platformCClient({ siteUrl, ...keys, via: { egress: createEgress({ allowPrivate: true }), operatorSet: false } });
const baseline = await measureHolds(async () => {
  for (let cursor: string | null = null; ; ) {
    const page = await client.listProducts(cursor);
    if (page.next === null) break;
    cursor = page.next;
  }
});

const work = mkdtempSync(path.join(tmpdir(), 'svc-bench-sync-'));
const config = loadConfig({ 'data-dir': work }, { SVC_ALLOW_PRIVATE_TARGETS: '1' });
const database = openDatabase(config.databaseFile);
migrateDatabase(database);
// As the server runs it: WAL checkpoints in a Worker, not inside a job's COMMIT.
const checkpointer = await startCheckpointer(database.sqlite, database.file, console.error);
const services = createWebhookServices(sqliteStorage(database), config, systemClock, { log: () => {}, writePause: writePause(database.sqlite) });
const store = (await services.stores.create({ platform: 'platform-c', domain: 'bench.example.com', currency: 'USD', parsed: parseCredentials('platform-c', 'bench.example.com', { siteUrl, ...keys }, config.platformAShopSuffix) }))!;
const importRun = await measureHolds(async () => {
  await services.sync.start(store.id, 'connect');
  while ((await services.sync.view(store.id)).state === 'running') await services.runner.runDueJobs();
});
const view = await services.sync.view(store.id);
const imported = database.sqlite.query('SELECT count(*) AS n FROM products').get() as { n: number };
await checkpointer.stop();
database.close();
site.kill();
rmSync(work, { recursive: true, force: true });

const rate = (ms: number) => Math.round((total / ms) * 1000);
console.log(`catalogue sync of ${total} platform-C products (${view.kinds.products.pages} pages, state ${view.state}, ${imported.n} rows)`);
console.log(holdsRow(`baseline (read pages only), ${rate(baseline.totalMs)} products/s`, baseline));
console.log(holdsRow(`import (read + write), ${rate(importRun.totalMs)} products/s`, importRun));
console.log(
  `ratio import/baseline: throughput ${(rate(importRun.totalMs) / rate(baseline.totalMs)).toFixed(2)}, worst stall (held) ${(importRun.heldMs / Math.max(baseline.heldMs, 0.1)).toFixed(2)}, longest on CPU ${(importRun.cpuMs / Math.max(baseline.cpuMs, 0.1)).toFixed(2)}`,
);
