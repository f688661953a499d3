import { t } from 'elysia';

export const MAX_HIGHLIGHTS = 20;
export const MAX_ATTRIBUTES = 50;

export const enrichmentBody = t.Object(
  {
    summary: t.String({ minLength: 1, maxLength: 1000 }),
    highlights: t.Array(t.String({ minLength: 1, maxLength: 300 }), { maxItems: MAX_HIGHLIGHTS }),
    attributes: t.Record(t.String({ minLength: 1, maxLength: 100 }), t.String({ maxLength: 500 }), { maxProperties: MAX_ATTRIBUTES }),
  },
  { additionalProperties: false },
);

export const enrichmentParams = t.Object({ id: t.String({ minLength: 1, maxLength: 64 }), productId: t.String({ minLength: 1, maxLength: 64 }) });
