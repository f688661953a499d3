import { ApiError } from './errors.ts';
import { badParameter } from './query.ts';

/**
 * Characters that are invisible or reorder what an operator reads: C0 and C1 controls (NUL, ESC,
 * DEL...), format characters (bidi overrides and isolates such as U+202E, zero-width spaces, the
 * BOM), lone surrogates, the line and paragraph separators, and U+FFFD (what bytes that were not
 * UTF-8 decode to). None belongs in an address.
 */
const HIDDEN_CHARACTER = /[\p{Cc}\p{Cf}\p{Cs}\u2028\u2029\ufffd]/u;

/** `U+202E` for the first hidden character of `text`, or null when it has none. */
export function hiddenCharacterIn(text: string): string | null {
  const found = HIDDEN_CHARACTER.exec(text)?.[0];
  return found === undefined ? null : `U+${found.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** Generous enough for any real address, strict enough to refuse junk (the domain is ASCII: IDNs in punycode). */
const EMAIL_PATTERN = /^[^\s@<>()[\]\\,;:"]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

export const MAX_EMAIL_CHARS = 254;

/**
 * The one check of a lead's email, wherever one arrives (the public sign-up, the start page's form,
 * the admin API, the CLI): trimmed and lower-cased, or 400 `invalid_email` saying why.
 */
export function normalizeEmail(input: string): string {
  const hidden = hiddenCharacterIn(input);
  if (hidden) throw new ApiError(400, 'invalid_email', `email must not contain control or invisible formatting characters (found ${hidden})`);
  const email = input.trim().toLowerCase();
  if (email.length > MAX_EMAIL_CHARS || !EMAIL_PATTERN.test(email)) throw new ApiError(400, 'invalid_email', `email must be a valid address of at most ${MAX_EMAIL_CHARS} characters`);
  return email;
}

/** A part of an address to search leads by (admin API and CLI): 1 to 254 visible characters, lower-cased; else 400 `invalid_query`. */
export function emailSearchTerm(input: string): string {
  const hidden = hiddenCharacterIn(input);
  if (hidden) throw badParameter('email', `must not contain control or invisible formatting characters (found ${hidden})`);
  const term = input.trim().toLowerCase();
  if (term === '' || input.length > MAX_EMAIL_CHARS) throw badParameter('email', `expected 1 to ${MAX_EMAIL_CHARS} characters of the address`);
  return term;
}
