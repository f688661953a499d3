/**
 * Rows sent as one JSON parameter (`json_populate_recordset(NULL::<table>, $n::text::json)`), for
 * the multi-row writes of the hot paths. Bun quotes a JS array parameter element by element in JS,
 * where JSON.stringify is native; and a `json` value (not `jsonb`) keeps its text, so an object
 * given for a text column of JSON (a scan's signals, a variant's options) is stored as the text
 * JSON.stringify gave it, as SQLite stores it. Sent as text: a parameter typed `json` Bun would
 * encode again.
 */

/** A lone surrogate's escape, as JSON.stringify writes it (or a `\\` before such text: that only costs the slow path). */
const LONE_SURROGATE = /\\ud[89a-f]/i;

/**
 * A row PostgreSQL's JSON takes when some text holds a lone surrogate (it refuses the escape
 * anywhere in a JSON value): a text column's as U+FFFD, as SQLite stores it; a JSON column's as the
 * text JSON.stringify gave, as a string (where the escape is text).
 */
const withoutLoneSurrogates = (row: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(row).map(([column, value]) => [column, typeof value === 'string' ? value.toWellFormed() : typeof value === 'object' && value !== null ? JSON.stringify(value) : value]));

/** The rows (objects keyed by column name) as the JSON text of one parameter. */
export function jsonRows(rows: Record<string, unknown>[]): string {
  const json = JSON.stringify(rows);
  return LONE_SURROGATE.test(json) ? JSON.stringify(rows.map(withoutLoneSurrogates)) : json;
}
