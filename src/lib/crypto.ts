import { randomBytes, timingSafeEqual } from 'node:crypto';

/** URL-safe random secret of `bytes` random bytes (base64url, no padding). */
export function randomSecret(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/** Hex SHA-256, with Bun's one-shot hasher (measured ~0.75 us against ~2 us for node:crypto's createHash on a key). */
export function sha256Hex(data: string | Uint8Array): string {
  return Bun.SHA256.hash(data, 'hex');
}

/**
 * An HMAC-SHA256 keyed with `key`, fed with `update` and read once with `digest`. Bun's hasher:
 * node:crypto's createHmac wraps the same hash in a stream object, measured ~0.7 us more per
 * signed ~2 KB body.
 */
export function hmacSha256Hasher(key: string | Uint8Array): Bun.CryptoHasher {
  return new Bun.CryptoHasher('sha256', key);
}

/** HMAC-SHA256 of `data`; an array is hashed as its parts concatenated, without copying them together. */
export function hmacSha256(key: string | Uint8Array, data: string | Uint8Array | (string | Uint8Array)[], encoding: 'hex' | 'base64'): string {
  const hmac = hmacSha256Hasher(key);
  for (const part of Array.isArray(data) ? data : [data]) hmac.update(part);
  return hmac.digest(encoding);
}

/**
 * Constant-time string equality. Unequal lengths still cost one comparison so the
 * time taken does not reveal how much of a guess was right.
 */
export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  if (left.length !== right.length) {
    timingSafeEqual(left, left);
    return false;
  }
  return timingSafeEqual(left, right);
}
