import { t } from 'elysia';
import { FAQ_ENTITY_TYPES, FAQ_STATUSES } from './types.ts';

// Literal unions, not t.UnionEnum: Elysia fills an absent UnionEnum with its first value, which would
// turn a PATCH without `status` into "pending".
const oneOf = <T extends string>(values: readonly T[]) => t.Union(values.map((value) => t.Literal(value)));
const entityType = oneOf(FAQ_ENTITY_TYPES);
const status = oneOf(FAQ_STATUSES);
const entityRef = t.String({ minLength: 1, maxLength: 255 });
// Raw input caps; the cleaned text is checked again (question at most 500 characters).
const question = t.String({ minLength: 1, maxLength: 2000 });
const answer = t.String({ minLength: 1, maxLength: 20_000 });
const position = t.Integer({ minimum: 0, maximum: 1_000_000 });

export const createFaqBody = t.Object(
  { storeId: t.String({ minLength: 1, maxLength: 64 }), entityType, entityRef, question, answer, status: t.Optional(status), position: t.Optional(position) },
  { additionalProperties: false },
);

export const updateFaqBody = t.Object(
  { question: t.Optional(question), answer: t.Optional(answer), status: t.Optional(status), position: t.Optional(position) },
  { additionalProperties: false },
);

/** One entity's entries (entityType and entityRef), or the whole store's, newest first and paged. */
export const listFaqQuery = t.Object(
  {
    storeId: t.String({ minLength: 1, maxLength: 64 }),
    entityType: t.Optional(entityType),
    entityRef: t.Optional(entityRef),
    status: t.Optional(status),
    cursor: t.Optional(t.String({ minLength: 1, maxLength: 64 })),
    limit: t.Optional(t.Numeric({ minimum: 1, maximum: 500 })),
  },
  { additionalProperties: false },
);

export const faqParams = t.Object({ id: t.String({ minLength: 1, maxLength: 64 }) });

/** Query of the public FAQ endpoint, checked after the key and origin (so a refused caller learns nothing). */
export const publicFaqQuery = t.Object({ type: entityType, ref: entityRef }, { additionalProperties: false });
