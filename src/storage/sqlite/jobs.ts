import { and, eq, inArray, sql } from 'drizzle-orm';
import type { AppDatabase } from '../../db/index.ts';
import { jobs } from '../../db/schema/index.ts';
import { writeTransaction } from './write-transaction.ts';
import type { JobRecords } from '../stores.ts';
import type { Synchronous } from '../synchronous.ts';
import { promised } from './promised.ts';

const UNFINISHED = ['queued', 'running'] as const;

/** Jobs on SQLite, answered synchronously: the webhook group commit and the sync's transactions queue jobs inside their own. */
export function sqliteJobRecordsSync({ db, sqlite }: Pick<AppDatabase, 'db' | 'sqlite'>): Synchronous<JobRecords> {
  // Prepared once: platform-B and -C deliveries enqueue a job inside their group commit.
  const insertJob = db
    .insert(jobs)
    .values({
      id: sql.placeholder('id'),
      kind: sql.placeholder('kind'),
      storeId: sql.placeholder('storeId'),
      payload: sql.placeholder('payload'),
      status: sql.placeholder('status'),
      attempts: sql.placeholder('attempts'),
      runAt: sql.placeholder('runAt'),
      leaseUntil: sql.placeholder('leaseUntil'),
      createdAt: sql.placeholder('createdAt'),
    })
    .returning()
    .prepare();
  // Prepared once, like the one below: asked for each kind when a catalogue sync starts, in the turn of the request that starts it.
  const unfinishedJob = db
    .select()
    .from(jobs)
    .where(and(eq(jobs.kind, sql.placeholder('kind')), eq(jobs.storeId, sql.placeholder('storeId')), inArray(jobs.status, [...UNFINISHED])))
    .prepare();
  // Prepared once: taken before every step of every job. The first looks past the jobs of one store
  // (`other`), the second takes any store's.
  const claimStatement = (otherStore: boolean) =>
    db
      .update(jobs)
      .set({ status: 'running', attempts: sql`${jobs.attempts} + 1`, leaseUntil: sql`${sql.placeholder('leaseUntil')}` })
      .where(
        eq(
          jobs.id,
          sql`(SELECT id FROM jobs WHERE ((status = 'queued' AND run_at <= ${sql.placeholder('now')}) OR (status = 'running' AND lease_until <= ${sql.placeholder('now')}))${otherStore ? sql` AND store_id != ${sql.placeholder('other')}` : sql``} ORDER BY run_at, id LIMIT 1)`,
        ),
      )
      .returning()
      .prepare();
  const claimOtherStore = claimStatement(true);
  const claimAny = claimStatement(false);
  const enqueue: Synchronous<JobRecords>['enqueue'] = (job) => insertJob.get(job)!;

  return {
    enqueue,

    enqueueOnce: writeTransaction(sqlite, (job) => {
      const active = unfinishedJob.get({ kind: job.kind, storeId: job.storeId });
      if (!active) return enqueue(job);
      if (active.status !== 'queued') return active;
      return db.update(jobs).set({ runAt: Math.min(active.runAt, job.runAt) }).where(eq(jobs.id, active.id)).returning().get()!;
    }),

    claim: (now, leaseUntil, otherThan) => (otherThan === null ? null : claimOtherStore.get({ now, leaseUntil, other: otherThan })) ?? claimAny.get({ now, leaseUntil }) ?? null,

    requeue(id, runAt, attempts) {
      const counted = attempts === 'kept' ? sql`${jobs.attempts}` : attempts === 'uncounted' ? sql`max(0, ${jobs.attempts} - 1)` : 0;
      db.update(jobs).set({ status: 'queued', attempts: counted, leaseUntil: null, lastError: null, runAt }).where(eq(jobs.id, id)).run();
    },

    releaseLeases(at) {
      db.update(jobs).set({ leaseUntil: at }).where(eq(jobs.status, 'running')).run();
    },

    complete(id, at) {
      db.update(jobs).set({ status: 'done', leaseUntil: null, lastError: null, finishedAt: at }).where(eq(jobs.id, id)).run();
    },

    fail(id, error, at, retryAt) {
      db.update(jobs)
        .set(retryAt === null ? { status: 'dead', leaseUntil: null, lastError: error, finishedAt: at } : { status: 'queued', leaseUntil: null, lastError: error, runAt: retryAt })
        .where(eq(jobs.id, id))
        .run();
    },

    nextRetry: (storeId, kinds) =>
      db
        .select({ attempts: jobs.attempts, runAt: jobs.runAt })
        .from(jobs)
        .where(and(eq(jobs.status, 'queued'), eq(jobs.storeId, storeId), sql`${jobs.attempts} > 0`, inArray(jobs.kind, [...kinds])))
        .orderBy(jobs.runAt)
        .limit(1)
        .get() ?? null,

    dropUnfinished: (storeId, kinds) =>
      db
        .delete(jobs)
        .where(and(eq(jobs.storeId, storeId), inArray(jobs.status, [...UNFINISHED]), kinds === null ? undefined : inArray(jobs.kind, [...kinds])))
        .returning({ id: jobs.id })
        .all().length,
  };
}

export const sqliteJobRecords = (database: Pick<AppDatabase, 'db' | 'sqlite'>): JobRecords => promised<JobRecords>(sqliteJobRecordsSync(database));
