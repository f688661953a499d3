import { and, eq, inArray, sql } from 'drizzle-orm';
import { jobs } from '../../db/postgres/schema/index.ts';
import type { Job, NewJob } from '../../webhooks/queue.ts';
import type { JobRecords } from '../stores.ts';
import type { PostgresClient, PostgresQueries } from './client.ts';
import { valuesKeptOut } from './errors.ts';

/** Stores `job` on `db` (a transaction it is part of, or the pool). */
export async function insertJob(db: PostgresQueries, job: NewJob): Promise<Job> {
  const [stored] = await db.insert(jobs).values(job).returning();
  return stored!;
}

/** The store's unfinished jobs (queued or running), of `kinds` (null: any), deleted on `db`; how many. */
export async function dropUnfinishedJobs(db: PostgresQueries, storeId: string, kinds: readonly string[] | null): Promise<number> {
  const dropped = await db
    .delete(jobs)
    .where(and(eq(jobs.storeId, storeId), inArray(jobs.status, ['queued', 'running']), kinds === null ? undefined : inArray(jobs.kind, [...kinds])))
    .returning({ id: jobs.id });
  return dropped.length;
}

/**
 * At most one unfinished job of `job`'s kind per store, inside the open transaction `tx`: a queued
 * one made due by `job.runAt` at the latest, a running one left as it is, else `job` stored. The
 * transaction first takes a lock of its own for the (kind, store), held to its end, so a second
 * enqueue of the same at the same time (another request, another instance) waits and then finds it.
 */
export async function enqueueOnceIn(tx: PostgresQueries, job: NewJob): Promise<Job> {
  await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtextextended(${`jobs:${job.kind}:${job.storeId}`}, 0))`);
  const [active] = await tx
    .select()
    .from(jobs)
    .where(and(eq(jobs.kind, job.kind), eq(jobs.storeId, job.storeId), inArray(jobs.status, ['queued', 'running'])))
    .limit(1);
  if (!active) return insertJob(tx, job);
  if (active.status !== 'queued') return active;
  const [made] = await tx.update(jobs).set({ runAt: Math.min(active.runAt, job.runAt) }).where(eq(jobs.id, active.id)).returning();
  return made!;
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

    enqueueOnce: (job) => db.transaction((tx) => enqueueOnceIn(tx, job)),

    claim: (now, leaseUntil, otherThan) => db.transaction(async (tx) => (otherThan === null ? null : await claimOn(tx, now, leaseUntil, otherThan)) ?? claimOn(tx, now, leaseUntil, null)),

    async requeue(id, runAt, attempts) {
      const counted = attempts === 'kept' ? sql`${jobs.attempts}` : attempts === 'uncounted' ? sql`greatest(0, ${jobs.attempts} - 1)` : 0;
      await db.update(jobs).set({ status: 'queued', attempts: counted, leaseUntil: null, lastError: null, runAt }).where(eq(jobs.id, id));
    },

    async releaseLeases(at) {
      await db.update(jobs).set({ leaseUntil: at }).where(eq(jobs.status, 'running'));
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

    dropUnfinished: (storeId, kinds) => dropUnfinishedJobs(db, storeId, kinds),
  });
}
