import { t } from 'elysia';
import { PLATFORMS } from './types.ts';

const currency = t.Optional(t.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 code' }));
const credentials = t.Record(t.String({ maxLength: 64 }), t.Union([t.String({ maxLength: 2048 }), t.Boolean()]), { maxProperties: 8 });

export const createStoreBody = t.Object(
  {
    platform: t.UnionEnum([...PLATFORMS]),
    domain: t.String({ minLength: 1, maxLength: 253 }),
    currency,
    credentials,
  },
  { additionalProperties: false },
);

/** `currency` here sets or corrects the store's currency (a store of svc's platform-A app has no API to read it from). */
export const credentialsBody = t.Object({ credentials, currency }, { additionalProperties: false });

export const storeParams = t.Object({ id: t.String({ minLength: 1, maxLength: 64 }) });
