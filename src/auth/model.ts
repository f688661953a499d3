import { t } from 'elysia';
import { SCOPES } from './keys.ts';

export const createKeyBody = t.Object(
  {
    name: t.Optional(t.String({ maxLength: 100 })),
    scopes: t.Array(t.UnionEnum([...SCOPES]), { minItems: 1, maxItems: SCOPES.length }),
    allowedDomains: t.Optional(t.Array(t.String({ maxLength: 255 }), { maxItems: 100 })),
    storeId: t.Optional(t.Nullable(t.String({ minLength: 1, maxLength: 64 }))),
  },
  { additionalProperties: false },
);

export const signUpBody = t.Object({ email: t.String({ maxLength: 254 }) });

export const idParams = t.Object({ id: t.String({ minLength: 1, maxLength: 64 }) });
