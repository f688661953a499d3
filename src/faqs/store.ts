import type { FaqRecords } from '../storage/content.ts';
import type { FaqEntityType, FaqStatus } from './types.ts';
import type { Clock } from '../lib/clock.ts';
import { ApiError } from '../lib/errors.ts';
import { htmlToLine, sanitizeBasicHtml } from '../lib/html.ts';
import { newId } from '../lib/ids.ts';

/** An FAQ entry as stored: `question` plain text and `answer` sanitized basic HTML (cleaned on input, so safe to serve); times in epoch ms. */
export interface FaqEntry {
  id: string;
  storeId: string;
  entityType: FaqEntityType;
  /** The platform id or the handle/slug of the entity. */
  entityRef: string;
  question: string;
  answer: string;
  position: number;
  status: FaqStatus;
  createdAt: number;
  updatedAt: number;
}

/** What an update changes of an entry (cleaned already), and its new `updatedAt`. */
export type FaqChanges = Partial<Pick<FaqEntry, 'question' | 'answer' | 'status' | 'position'>> & { updatedAt: number };

/** An entry as the admin API shows it: times as ISO 8601. */
export interface FaqView extends Omit<FaqEntry, 'createdAt' | 'updatedAt'> {
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

export function toFaqView(row: FaqEntry): FaqView {
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
 * FAQ entries over their records: input cleaned here, and the records stamp the entity's change
 * time (at least 1 ms later than the previous stamp, so it works as a version) with every write.
 */
export function createFaqStore(records: FaqRecords, clock: Clock) {
  return {
    get: (id: string) => records.byId(id),

    async create(input: NewFaq): Promise<FaqEntry> {
      const now = clock.now();
      return records.create({
        id: newId(),
        storeId: input.storeId,
        entityType: input.entityType,
        entityRef: input.entityRef,
        question: cleanQuestion(input.question),
        answer: cleanAnswer(input.answer),
        position: input.position ?? 0,
        status: input.status ?? 'pending',
        createdAt: now,
        updatedAt: now,
      });
    },

    /** Null when there is no such entry. */
    async update(id: string, patch: FaqPatch): Promise<FaqEntry | null> {
      const existing = await records.byId(id);
      if (!existing) return null;
      const changes: FaqChanges = { updatedAt: Math.max(clock.now(), existing.updatedAt) };
      if (patch.question !== undefined) changes.question = cleanQuestion(patch.question);
      if (patch.answer !== undefined) changes.answer = cleanAnswer(patch.answer);
      if (patch.status !== undefined) changes.status = patch.status;
      if (patch.position !== undefined) changes.position = patch.position;
      return records.update(existing, changes);
    },

    async remove(id: string): Promise<boolean> {
      const existing = await records.byId(id);
      if (!existing) return false;
      await records.remove(existing, clock.now());
      return true;
    },

    /** Every entry of one entity, any status, in display order (position, then creation). */
    listByEntity: (storeId: string, entityType: FaqEntityType, entityRef: string) => records.listByEntity(storeId, entityType, entityRef),

    /**
     * A store's entries across entities, newest first (ids are time-ordered), optionally of one
     * status: the moderation queue is `status = pending`. `cursor` is the last id of the previous page.
     */
    listByStore: (storeId: string, status: FaqStatus | undefined, cursor: string | null, limit: number) => records.listByStore(storeId, status, cursor, limit),
  };
}

export type FaqStore = ReturnType<typeof createFaqStore>;
