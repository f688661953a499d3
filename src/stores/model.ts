import { t } from 'elysia';
import { PLATFORMS } from '../db/schema/index.ts';

const credentials = t.Record(t.String({ maxLength: 64 }), t.Union([t.String({ maxLength: 2048 }), t.Boolean()]), { maxProperties: 8 });

export const createStoreBody = t.Object(
  {
    platform: t.UnionEnum([...PLATFORMS]),
    domain: t.String({ minLength: 1, maxLength: 253 }),
    currency: t.Optional(t.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 code' })),
    credentials,
  },
  { additionalProperties: false },
);

export const credentialsBody = t.Object({ credentials }, { additionalProperties: false });

export const storeParams = t.Object({ id: t.String({ minLength: 1, maxLength: 64 }) });
