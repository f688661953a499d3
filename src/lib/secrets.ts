import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const SEALED = 'enc:v1:';
const CLEAR = 'plain:';

/**
 * Seals secrets for storage: AES-256-GCM with a random 96-bit nonce when a key is configured,
 * else kept in clear behind a `plain:` marker (svc warns once at start). `context` is bound as
 * additional authenticated data, so a sealed value copied to another row or column fails to open.
 */
export interface SecretBox {
  readonly encrypting: boolean;
  seal(plain: string, context: string): string;
  open(stored: string, context: string): string;
}

export function createSecretBox(key: Uint8Array | null): SecretBox {
  if (key && key.byteLength !== 32) throw new Error('the encryption key must be 32 bytes');
  return {
    encrypting: key !== null,
    seal(plain, context) {
      if (!key) return CLEAR + plain;
      const nonce = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, nonce);
      cipher.setAAD(Buffer.from(context));
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final(), cipher.getAuthTag()]);
      return `${SEALED}${nonce.toString('base64url')}.${body.toString('base64url')}`;
    },
    open(stored, context) {
      if (stored.startsWith(CLEAR)) return stored.slice(CLEAR.length);
      if (!stored.startsWith(SEALED)) throw new Error('unrecognised stored secret format');
      if (!key) throw new Error('a stored secret is encrypted but SVC_ENCRYPTION_KEY is not set');
      const [nonce, body] = stored.slice(SEALED.length).split('.');
      const bytes = Buffer.from(body ?? '', 'base64url');
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(nonce ?? '', 'base64url'));
      decipher.setAAD(Buffer.from(context));
      decipher.setAuthTag(bytes.subarray(bytes.length - 16));
      try {
        return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - 16)), decipher.final()]).toString('utf8');
      } catch {
        throw new Error('a stored secret does not open with SVC_ENCRYPTION_KEY: another key sealed it (or it was moved to another row)');
      }
    },
  };
}
