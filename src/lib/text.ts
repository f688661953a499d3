/**
 * Text without NUL characters (U+0000): how svc stores text an outside party (a platform) sent.
 * PostgreSQL's text columns refuse the character where SQLite's keep it, so both engines are given
 * the text without it, and store the same (CONTRIBUTING.md, PostgreSQL). Identifiers never hold one
 * (platform ids are digits: platforms/http.ts idOf); in free text it carries nothing.
 */
export const withoutNul = (text: string): string => (text.includes('\u0000') ? text.replaceAll('\u0000', '') : text);

/** `record` with each of its own string fields without NUL characters (withoutNul): `record` itself when none holds one. */
export function withoutNulFields<T extends object>(record: T): T {
  let cleaned: T | null = null;
  for (const key in record) {
    const value = record[key];
    if (typeof value === 'string' && value.includes('\u0000')) (cleaned ??= { ...record })[key] = withoutNul(value) as T[typeof key];
  }
  return cleaned ?? record;
}
