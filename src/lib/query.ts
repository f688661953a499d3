import { ApiError } from './errors.ts';

// Query-string handling shared by the list endpoints: strict parameters, page sizes, keyset cursors.

export const MAX_PAGE = 500;
export const DEFAULT_PAGE = 50;

/** 400 `invalid_query` naming the parameter. */
export const badParameter = (name: string, problem: string) => new ApiError(400, 'invalid_query', `${name}: ${problem}`);

/** The query string as single values; a repeated or unknown parameter is 400. */
export function queryParams(url: string, allowed: readonly string[]): Map<string, string> {
  const params = new Map<string, string>();
  for (const [name, value] of new URL(url).searchParams) {
    if (!allowed.includes(name)) throw badParameter(name, `unknown parameter; expected one of ${allowed.join(', ')}`);
    if (params.has(name)) throw badParameter(name, 'given more than once');
    params.set(name, value);
  }
  return params;
}

export function parseLimit(value: string | undefined, { fallback, max } = { fallback: DEFAULT_PAGE, max: MAX_PAGE }): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > max) throw badParameter('limit', `expected a whole number from 1 to ${max}`);
  return n;
}

/** `true` or `false`, else 400 naming the parameter. */
export function parseBoolean(name: string, value: string | undefined): boolean | undefined {
  if (value === undefined) return undefined;
  if (value !== 'true' && value !== 'false') throw badParameter(name, 'expected true or false');
  return value === 'true';
}

/** Where a newest-first page starts: after the row with this (time, id). Opaque to clients. */
export interface KeysetCursor {
  at: number;
  id: string;
}

export function encodeKeysetCursor({ at, id }: KeysetCursor): string {
  return Buffer.from(JSON.stringify([at, id])).toString('base64url');
}

export function parseKeysetCursor(value: string | undefined): KeysetCursor | null {
  if (value === undefined) return null;
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(value, 'base64url').toString('utf8'));
  } catch {
    decoded = null;
  }
  if (!Array.isArray(decoded) || decoded.length !== 2 || !Number.isSafeInteger(decoded[0]) || typeof decoded[1] !== 'string' || decoded[1].length > 64) {
    throw badParameter('cursor', 'not a cursor from a previous page (nextCursor)');
  }
  return { at: decoded[0], id: decoded[1] };
}

/** One page of a list in keyset order: `nextCursor` (the last item's id) asks for the next page; null on the last. */
export interface KeysetPage<Row> {
  items: Row[];
  nextCursor: string | null;
}

/** A keyset page from `limit + 1` rows read after the cursor: the first `limit`, and the cursor of the next page (the last row's id) when there is one. */
export function keysetPage<Row extends { id: string }>(rows: Row[], limit: number): KeysetPage<Row> {
  const items = rows.slice(0, limit);
  return { items, nextCursor: rows.length > limit ? items[items.length - 1]!.id : null };
}
