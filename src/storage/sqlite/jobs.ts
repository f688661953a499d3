import { and, eq, inArray, sql } from 'drizzle-orm';
import type { AppDatabase } from './db/index.ts';
import { jobs } from './db/schema/index.ts';
import { writeTransaction } from './write-transaction.ts';
import { onceKey, UNFINISHED_JOB_STATUSES } from '../../webhooks/queue.ts';
import type { JobRecords } from '../stores.ts';
import type { Synchronous } from '../synchronous.ts';
import { promised } from './promised.ts';

/** The job's lease as one run holds it (until `heldUntil`): a lease another runner took since has another end. */
const heldLease = (id: string, heldUntil: number) => and(eq(jobs.id, id), eq(jobs.status, 'running'), eq(jobs.leaseUntil, heldUntil));

/** Jobs on SQLite, answered synchronously: the webhook group commit and the sync's transactions queue jobs inside their own. */
export function sqliteJobRecordsSync({ db, sqlite }: Pick<AppDatabase, 'db' | 'sqlite'>): Synchronous<JobRecords> {
  /** A job's insert, its values bound at each run. */
  const jobInsert = () =>
    db
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
        activeKey: sql.placeholder('activeKey'),
      });
  // Prepared once: platform-B and -C deliveries enqueue a job inside their group commit.
  const insertJob = jobInsert().returning().prepare();
  // Prepared once, like the one below: run for each kind when a catalogue sync starts, in the turn of
  // the request that starts it. The unique index on the active key stores one: a second of the same
  // makes the queued one due (never later) and leaves a running one as it is (no row returned).
  const upsertOnce = jobInsert()
    .onConflictDoUpdate({ target: jobs.activeKey, targetWhere: sql`status IN ('queued', 'running')`, set: { runAt: sql`min(${jobs.runAt}, excluded.run_at)` }, setWhere: sql`${jobs.status} = 'queued'` })
    .returning()
    .prepare();
  const activeJob = db
    .select()
    .from(jobs)
    .where(and(eq(jobs.activeKey, sql.placeholder('activeKey')), inArray(jobs.status, [...UNFINISHED_JOB_STATUSES])))
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
      const keyed = { ...job, activeKey: onceKey(job) };
      return upsertOnce.get(keyed) ?? activeJob.get(keyed)!;
    }),

    claim: (now, leaseUntil, otherThan) => (otherThan === null ? null : claimOtherStore.get({ now, leaseUntil, other: otherThan })) ?? claimAny.get({ now, leaseUntil }) ?? null,

    requeue(id, runAt, attempts) {
      const counted = attempts === 'kept' ? sql`${jobs.attempts}` : attempts === 'uncounted' ? sql`max(0, ${jobs.attempts} - 1)` : 0;
      db.update(jobs).set({ status: 'queued', attempts: counted, leaseUntil: null, lastError: null, runAt }).where(eq(jobs.id, id)).run();
    },

    releaseLeases(at) {
      db.update(jobs).set({ leaseUntil: at }).where(eq(jobs.status, 'running')).run();
    },

    renewLease: (id, heldUntil, leaseUntil) => db.update(jobs).set({ leaseUntil }).where(heldLease(id, heldUntil)).returning({ id: jobs.id }).all().length === 1,

    handBack(id, heldUntil, at) {
      db.update(jobs).set({ leaseUntil: at }).where(heldLease(id, heldUntil)).run();
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

    hasUnfinished: (storeId, kinds) =>
      db
        .select({ id: jobs.id })
        .from(jobs)
        .where(and(eq(jobs.storeId, storeId), inArray(jobs.status, [...UNFINISHED_JOB_STATUSES]), inArray(jobs.kind, [...kinds])))
        .limit(1)
        .get() !== undefined,

    dropUnfinished: (storeId, kinds) =>
      db
        .delete(jobs)
        .where(and(eq(jobs.storeId, storeId), inArray(jobs.status, [...UNFINISHED_JOB_STATUSES]), kinds === null ? undefined : inArray(jobs.kind, [...kinds])))
        .returning({ id: jobs.id })
        .all().length,
  };
}

export const sqliteJobRecords = (database: Pick<AppDatabase, 'db' | 'sqlite'>): JobRecords => promised<JobRecords>(sqliteJobRecordsSync(database));
