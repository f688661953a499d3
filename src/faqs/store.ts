import { and, asc, desc, eq, inArray, lt, max, sql } from 'drizzle-orm';
import type { Db } from '../db/index.ts';
import { faqEntityChanges, faqEntries, type FaqEntryRow } from '../db/schema/index.ts';
import type { FaqEntityType, FaqStatus } from './types.ts';
import type { Clock } from '../lib/clock.ts';
import { ApiError } from '../lib/errors.ts';
import { htmlToLine, sanitizeBasicHtml } from '../lib/html.ts';
import { newId } from '../lib/ids.ts';
import { keysetPage } from '../lib/query.ts';

export interface FaqView {
  id: string;
  storeId: string;
  entityType: FaqEntityType;
  entityRef: string;
  question: string;
  answer: string;
  position: number;
  status: FaqStatus;
  createdAt: string;
  updatedAt: string;
}

/** What the public endpoint and the signals show of an approved entry. */
export interface PublicFaq {
  id: string;
  question: string;
  answer: string;
}

export interface NewFaq {
  storeId: string;
  entityType: FaqEntityType;
  entityRef: string;
  question: string;
  answer: string;
  status?: FaqStatus | undefined;
  position?: number | undefined;
}

export type FaqPatch = Partial<Pick<NewFaq, 'question' | 'answer' | 'status' | 'position'>>;

export const MAX_QUESTION_CHARS = 500;

export function toFaqView(row: FaqEntryRow): FaqView {
  return {
    id: row.id,
    storeId: row.storeId,
    entityType: row.entityType,
    entityRef: row.entityRef,
    question: row.question,
    answer: row.answer,
    position: row.position,
    status: row.status,
    createdAt: new Date(row.createdAt).toISOString(),
    updatedAt: new Date(row.updatedAt).toISOString(),
  };
}

/** Plain-text question: tags stripped, control characters removed; 400 when nothing is left or it is too long. */
function cleanQuestion(raw: string): string {
  const question = htmlToLine(raw);
  if (!question) throw new ApiError(400, 'invalid_request', 'question: must contain text');
  if (question.length > MAX_QUESTION_CHARS) throw new ApiError(400, 'invalid_request', `question: at most ${MAX_QUESTION_CHARS} characters`);
  return question;
}

/** Basic-HTML answer (lib/html.ts); 400 when no text is left after sanitizing. */
function cleanAnswer(raw: string): string {
  const answer = sanitizeBasicHtml(raw);
  if (!htmlToLine(answer)) throw new ApiError(400, 'invalid_request', 'answer: must contain text');
  return answer;
}

/**
 * FAQ entries; every write also stamps the entity's change time (faq_entity_changes, at least 1 ms
 * later than the previous stamp so it works as a version), in the same transaction.
 */
export function createFaqStore(db: Db, clock: Clock) {
  const stamp = (tx: Pick<Db, 'insert'>, row: Pick<FaqEntryRow, 'storeId' | 'entityType' | 'entityRef'>, at: number) =>
    tx
      .insert(faqEntityChanges)
      .values({ storeId: row.storeId, entityType: row.entityType, entityRef: row.entityRef, changedAt: at })
      .onConflictDoUpdate({ target: [faqEntityChanges.storeId, faqEntityChanges.entityType, faqEntityChanges.entityRef], set: { changedAt: sql`max(${faqEntityChanges.changedAt} + 1, ${at})` } })
      .run();
  const byId = (id: string) => db.select().from(faqEntries).where(eq(faqEntries.id, id)).get() ?? null;

  return {
    get: byId,

    create(input: NewFaq): FaqEntryRow {
      const values = {
        id: newId(),
        storeId: input.storeId,
        entityType: input.entityType,
        entityRef: input.entityRef,
        question: cleanQuestion(input.question),
        answer: cleanAnswer(input.answer),
        position: input.position ?? 0,
        status: input.status ?? 'pending',
        createdAt: clock.now(),
        updatedAt: clock.now(),
      };
      return db.transaction((tx) => {
        stamp(tx, values, values.updatedAt);
        return tx.insert(faqEntries).values(values).returning().get();
      });
    },

    /** Null when there is no such entry. */
    update(id: string, patch: FaqPatch): FaqEntryRow | null {
      const existing = byId(id);
      if (!existing) return null;
      const set: Partial<FaqEntryRow> = { updatedAt: Math.max(clock.now(), existing.updatedAt) };
      if (patch.question !== undefined) set.question = cleanQuestion(patch.question);
      if (patch.answer !== undefined) set.answer = cleanAnswer(patch.answer);
      if (patch.status !== undefined) set.status = patch.status;
      if (patch.position !== undefined) set.position = patch.position;
      return db.transaction((tx) => {
        stamp(tx, existing, set.updatedAt!);
        return tx.update(faqEntries).set(set).where(eq(faqEntries.id, id)).returning().get() ?? null;
      });
    },

    remove(id: string): boolean {
      const existing = byId(id);
      if (!existing) return false;
      db.transaction((tx) => {
        stamp(tx, existing, clock.now());
        tx.delete(faqEntries).where(eq(faqEntries.id, id)).run();
      });
      return true;
    },

    /** Every entry of one entity, any status, in display order (position, then creation). */
    listByEntity(storeId: string, entityType: FaqEntityType, entityRef: string): FaqEntryRow[] {
      return db
        .select()
        .from(faqEntries)
        .where(and(eq(faqEntries.storeId, storeId), eq(faqEntries.entityType, entityType), eq(faqEntries.entityRef, entityRef)))
        .orderBy(asc(faqEntries.position), asc(faqEntries.createdAt), asc(faqEntries.id))
        .all();
    },

    /**
     * A store's entries across entities, newest first (ids are time-ordered), optionally of one
     * status: the moderation queue is `status = pending`. `cursor` is the last id of the previous page.
     */
    listByStore(storeId: string, status: FaqStatus | undefined, cursor: string | null, limit: number): { items: FaqEntryRow[]; nextCursor: string | null } {
      const rows = db
        .select()
        .from(faqEntries)
        .where(and(eq(faqEntries.storeId, storeId), status ? eq(faqEntries.status, status) : undefined, cursor ? lt(faqEntries.id, cursor) : undefined))
        .orderBy(desc(faqEntries.id))
        .limit(limit + 1)
        .all();
      return keysetPage(rows, limit);
    },

    /** Approved entries filed under any of `refs` (a product's id and its handle name the same entity), in display order. */
    approved(storeId: string, entityType: FaqEntityType, refs: string[]): PublicFaq[] {
      return db
        .select({ id: faqEntries.id, question: faqEntries.question, answer: faqEntries.answer })
        .from(faqEntries)
        .where(and(eq(faqEntries.storeId, storeId), eq(faqEntries.entityType, entityType), inArray(faqEntries.entityRef, refs), eq(faqEntries.status, 'approved')))
        .orderBy(asc(faqEntries.position), asc(faqEntries.createdAt), asc(faqEntries.id))
        .all();
    },

    /** When the FAQs filed under any of `refs` last changed (epoch ms), or null if never. */
    changedAt(storeId: string, entityType: FaqEntityType, refs: string[]): number | null {
      const row = db
        .select({ at: max(faqEntityChanges.changedAt) })
        .from(faqEntityChanges)
        .where(and(eq(faqEntityChanges.storeId, storeId), eq(faqEntityChanges.entityType, entityType), inArray(faqEntityChanges.entityRef, refs)))
        .get();
      return row?.at ?? null;
    },
  };
}

export type FaqStore = ReturnType<typeof createFaqStore>;
