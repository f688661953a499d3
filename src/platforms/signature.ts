import { hmacSha256, safeEqual } from '../lib/crypto.ts';

/** Platforms A and C: base64 HMAC-SHA256 of the raw body bytes, compared in constant time. */
export function verifyBodySignature(secret: string, body: Uint8Array, signature: string | null): boolean {
  if (!signature) return false;
  return safeEqual(hmacSha256(secret, body, 'base64'), signature.trim());
}
