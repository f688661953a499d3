import { bearer, jsonRequest, type TestApp } from './app.ts';

/** Create a store through the admin API; returns the response JSON and status. */
export async function createStore(t: TestApp, body: Record<string, unknown>): Promise<{ status: number; store: any }> {
  const res = await t.request('/api/v1/admin/stores', jsonRequest('POST', body, bearer(await t.keyWith('admin'))));
  return { status: res.status, store: await res.json() };
}

export async function getProduct(t: TestApp, storeId: string, productId: string | number): Promise<{ status: number; body: any }> {
  const res = await t.request(`/api/v1/admin/stores/${storeId}/products/${productId}`, { headers: bearer(await t.keyWith('admin')) });
  return { status: res.status, body: await res.json() };
}

/** Flip one byte of a string (a body altered in transit). */
export function flipByte(text: string, at = Math.floor(text.length / 2)): string {
  return text.slice(0, at) + String.fromCharCode(text.charCodeAt(at) ^ 1) + text.slice(at + 1);
}

/** Every row of a table, on either engine (`t.query`), in the order of its first column (ids are time-ordered). */
export async function rows(t: TestApp, table: string): Promise<any[]> {
  return t.query(`SELECT * FROM ${table} ORDER BY 1`);
}

/** The names of svc's tables, on either engine. */
export async function tableNames(t: TestApp): Promise<string[]> {
  const sql = t.config.postgres ? "SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public'" : "SELECT name FROM sqlite_master WHERE type = 'table'";
  return (await t.query(sql)).map((row) => String(row.name));
}

/** The names of svc's tables that have a column `column`, on either engine. */
export async function tablesWithColumn(t: TestApp, column: string): Promise<string[]> {
  const sql = t.config.postgres
    ? "SELECT table_name AS name FROM information_schema.columns WHERE table_schema = 'public' AND column_name = ?"
    : "SELECT m.name FROM sqlite_master AS m JOIN pragma_table_info(m.name) AS c WHERE m.type = 'table' AND c.name = ?";
  return (await t.query(sql, column)).map((row) => String(row.name));
}

const HEX = '0123456789abcdef';
const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/**
 * A signature or secret right in everything but its last `count` characters (padding kept), each
 * replaced by another character of the same alphabet: what a comparison on a prefix would accept.
 */
export function wrongEnding(value: string, count = 2): string {
  const end = value.replace(/=+$/, '').length;
  const alphabet = /^[0-9a-f]+$/.test(value) ? HEX : BASE64;
  const changed = [...value.slice(end - count, end)].map((c) => alphabet[(alphabet.indexOf(c) + alphabet.length / 2) % alphabet.length]).join('');
  return value.slice(0, end - count) + changed + value.slice(end);
}
