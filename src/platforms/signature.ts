import { hmacSha256, safeEqual } from '../lib/crypto.ts';

/** Platforms A and C: base64 HMAC-SHA256 of the raw body bytes, compared in constant time. */
export function verifyBodySignature(secret: string, body: Uint8Array, signature: string | null): boolean {
  if (!signature) return false;
  return safeEqual(hmacSha256(secret, body, 'base64'), signature.trim());
}

/** Whether a signature header has the shape of a base64 HMAC-SHA256 (44 characters), checked before the body is read. */
export const isSignatureShaped = (signature: string): boolean => /^[A-Za-z0-9+/]{43}=$/.test(signature.trim());
