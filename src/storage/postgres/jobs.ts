import { and, eq, inArray, sql } from 'drizzle-orm';
import { jobs } from './db/schema/index.ts';
import { onceKey, UNFINISHED_JOB_STATUSES, type Job, type NewJob } from '../../webhooks/queue.ts';
import type { JobRecords } from '../stores.ts';
import type { PostgresClient, PostgresQueries } from './client.ts';
import { valuesKeptOut } from './errors.ts';

/** The job's lease as one run holds it (until `heldUntil`): a lease another runner took since has another end. */
const heldLease = (id: string, heldUntil: number) => and(eq(jobs.id, id), eq(jobs.status, 'running'), eq(jobs.leaseUntil, heldUntil));

/** Stores `job` on `db` (a transaction it is part of, or the pool). */
export async function insertJob(db: PostgresQueries, job: NewJob): Promise<Job> {
  const [stored] = await db.insert(jobs).values(job).returning();
  return stored!;
}

/** The store's unfinished jobs (queued or running), of `kinds` (null: any), deleted on `db`; how many. */
export async function dropUnfinishedJobs(db: PostgresQueries, storeId: string, kinds: readonly string[] | null): Promise<number> {
  const dropped = await db
    .delete(jobs)
    .where(and(eq(jobs.storeId, storeId), inArray(jobs.status, [...UNFINISHED_JOB_STATUSES]), kinds === null ? undefined : inArray(jobs.kind, [...kinds])))
    .returning({ id: jobs.id });
  return dropped.length;
}

/**
 * At most one unfinished job of `job`'s kind per store, on `db` (a transaction it is part of, or the
 * pool): a queued one made due by `job.runAt` at the latest, a running one left as it is, else `job`
 * stored. The unique index on the active key decides: a second enqueue of the same at the same time
 * (another request, another instance) waits for the first's commit, then finds its job.
 */
export async function enqueueOnceIn(db: PostgresQueries, job: NewJob): Promise<Job> {
  const keyed = { ...job, activeKey: onceKey(job) };
  // A job that ends between the two statements (completed, dropped) leaves nothing to find: stored then.
  for (;;) {
    const [stored] = await db
      .insert(jobs)
      .values(keyed)
      .onConflictDoUpdate({ target: jobs.activeKey, targetWhere: sql`status IN ('queued', 'running')`, set: { runAt: sql`least(${jobs.runAt}, excluded.run_at)` }, setWhere: sql`${jobs.status} = 'queued'` })
      .returning();
    if (stored) return stored;
    const [running] = await db
      .select()
      .from(jobs)
      .where(and(eq(jobs.activeKey, keyed.activeKey), inArray(jobs.status, [...UNFINISHED_JOB_STATUSES])));
    if (running) return running;
  }
}

/**
 * Jobs on PostgreSQL (the same contract as src/storage/sqlite/jobs.ts). A claim takes the due job
 * with `FOR UPDATE SKIP LOCKED` in its own transaction: two claims at the same time (two runners,
 * later two instances) never take the same job, and neither waits for the other.
 */
export function postgresJobRecords({ db }: Pick<PostgresClient, 'db'>): JobRecords {
  /** The next due job (another store's than `other`, when given), claimed on `tx`; null when there is none. */
  async function claimOn(tx: PostgresQueries, now: number, leaseUntil: number, other: string | null): Promise<Job | null> {
    const [claimed] = await tx
      .update(jobs)
      .set({ status: 'running', attempts: sql`${jobs.attempts} + 1`, leaseUntil })
      .where(
        eq(
          jobs.id,
          sql`(SELECT id FROM jobs WHERE ((status = 'queued' AND run_at <= ${now}) OR (status = 'running' AND lease_until <= ${now}))${other === null ? sql`` : sql` AND store_id <> ${other}`} ORDER BY run_at, id LIMIT 1 FOR UPDATE SKIP LOCKED)`,
        ),
      )
      .returning();
    return claimed ?? null;
  }

  return valuesKeptOut<JobRecords>('jobs', {
    enqueue: (job) => insertJob(db, job),

    enqueueOnce: (job) => enqueueOnceIn(db, job),

    claim: (now, leaseUntil, otherThan) => db.transaction(async (tx) => (otherThan === null ? null : await claimOn(tx, now, leaseUntil, otherThan)) ?? claimOn(tx, now, leaseUntil, null)),

    async requeue(id, runAt, attempts) {
      const counted = attempts === 'kept' ? sql`${jobs.attempts}` : attempts === 'uncounted' ? sql`greatest(0, ${jobs.attempts} - 1)` : 0;
      await db.update(jobs).set({ status: 'queued', attempts: counted, leaseUntil: null, lastError: null, runAt }).where(eq(jobs.id, id));
    },

    async releaseLeases(at) {
      await db.update(jobs).set({ leaseUntil: at }).where(eq(jobs.status, 'running'));
    },

    renewLease: async (id, heldUntil, leaseUntil) => (await db.update(jobs).set({ leaseUntil }).where(heldLease(id, heldUntil)).returning({ id: jobs.id })).length === 1,

    async handBack(id, heldUntil, at) {
      await db.update(jobs).set({ leaseUntil: at }).where(heldLease(id, heldUntil));
    },

    async complete(id, at) {
      await db.update(jobs).set({ status: 'done', leaseUntil: null, lastError: null, finishedAt: at }).where(eq(jobs.id, id));
    },

    async fail(id, error, at, retryAt) {
      await db
        .update(jobs)
        .set(retryAt === null ? { status: 'dead', leaseUntil: null, lastError: error, finishedAt: at } : { status: 'queued', leaseUntil: null, lastError: error, runAt: retryAt })
        .where(eq(jobs.id, id));
    },

    async nextRetry(storeId, kinds) {
      if (kinds.length === 0) return null;
      const [waiting] = await db
        .select({ attempts: jobs.attempts, runAt: jobs.runAt })
        .from(jobs)
        .where(and(eq(jobs.status, 'queued'), eq(jobs.storeId, storeId), sql`${jobs.attempts} > 0`, inArray(jobs.kind, [...kinds])))
        .orderBy(jobs.runAt)
        .limit(1);
      return waiting ?? null;
    },

    async hasUnfinished(storeId, kinds) {
      if (kinds.length === 0) return false;
      const found = await db
        .select({ id: jobs.id })
        .from(jobs)
        .where(and(eq(jobs.storeId, storeId), inArray(jobs.status, [...UNFINISHED_JOB_STATUSES]), inArray(jobs.kind, [...kinds])))
        .limit(1);
      return found.length > 0;
    },

    dropUnfinished: (storeId, kinds) => dropUnfinishedJobs(db, storeId, kinds),
  });
}
