// Synthetic scans for the dashboard and background-work benches: deterministic pseudo-random rows
// (skewed hosts, countries and grades) with scannedAt rising over a year as they are inserted,
// written with prepared INSERTs straight into the scans table of a migrated database.
import type { Database } from 'bun:sqlite';
import { GRADES, PAGE_TYPES, PRESENCE_KEYS, SCAN_PLATFORMS } from '../../src/scans/vocabulary.ts';
import { newId } from '../../src/lib/ids.ts';
import { DAY_MS } from '../../src/lib/time.ts';

const HOSTS = 20_000;
const COUNTRIES = ['US', 'DE', 'GB', 'FR', 'NL', 'ES', 'IT', 'CA', 'AU', 'SE', 'PL', 'BR', 'JP', 'IN', 'CH'];
export const SPAN_MS = 365 * DAY_MS;

/**
 * `generate(count, start)` inserts scans number start..start+count-1 of `total`, spread over the
 * year before `now`, in one transaction.
 */
export function scanGenerator(sqlite: Database, total: number, now: number) {
  let seed = 42;
  const rand = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
  const pick = <T>(list: readonly T[], skew = 1) => list[Math.floor(rand() ** skew * list.length)]!;
  const signals = JSON.stringify({ title: { value: 'Organic Green Tea - Loose Leaf, 100 g', length: 37 }, lang: 'en', robots: 'index,follow', headings: { h1: ['Organic Green Tea'] } });
  const insert = sqlite.prepare(
    'INSERT INTO scans (id, hostname, url, scanned_at, received_at, country, platform, platform_confidence, page_type, grade, percentage, svc_detected, svc_version, vertical, ' +
      'has_title, has_description, has_json_ld, has_open_graph, has_h1, has_canonical, has_robots, signals, quality, data) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)',
  );
  const bit = () => (rand() < 0.15 ? null : rand() < 0.7 ? 1 : 0);
  return sqlite.transaction((count: number, start: number) => {
    for (let i = start; i < start + count; i++) {
      const host = `shop-${Math.floor(rand() ** 2 * HOSTS)}.example.com`;
      const scannedAt = now - SPAN_MS + Math.floor(((i + rand()) / total) * SPAN_MS);
      const grade = pick(GRADES, 1.3);
      const percentage = Math.round((100 - GRADES.indexOf(grade as (typeof GRADES)[number]) * 15 - rand() * 14) * 10) / 10;
      insert.run(newId(), host, `https://${host}/products/p-${i}`, scannedAt, scannedAt + 500, rand() < 0.1 ? null : pick(COUNTRIES, 2),
        pick(SCAN_PLATFORMS, 1.5), 0.9, pick(PAGE_TYPES, 1.5), grade, Math.max(0, percentage), rand() < 0.3 ? 1 : 0, '1.4.2', 'food-and-drink',
        bit(), bit(), bit(), bit(), bit(), bit(), bit(), signals, JSON.stringify({ grade, percentage }), '{"extensionVersion":"3.8.1"}');
    }
  });
}

/** Insert `total` scans in transactions of 50,000 rows. */
export function generateScans(sqlite: Database, total: number, now: number): void {
  const generate = scanGenerator(sqlite, total, now);
  for (let done = 0; done < total; done += 50_000) generate(Math.min(50_000, total - done), done);
}

/** 40 assigned ISO 3166-1 codes: the countries of realistic scans. */
const REALISTIC_COUNTRIES = (
  'US DE GB FR NL ES IT CA AU SE PL BR JP IN CH AT BE DK FI NO IE PT CZ HU RO GR TR MX AR CL CO ZA NG EG KE SG MY TH ID NZ'
).split(' ');

/** One scan as realisticScans draws it: the dimensions and measures the dashboard reads. */
export interface RealisticScan {
  hostname: string;
  url: string;
  scannedAt: number;
  country: string | null;
  platform: string | null;
  pageType: string | null;
  grade: string;
  percentage: number;
  svcDetected: boolean;
  /** Per PRESENCE_KEYS, in its order: present, absent or not reported. */
  presence: (boolean | null)[];
}

/**
 * Scans shaped like a real import (issue 29): 5,000 hostnames, 40 countries, the 6 platforms and 8
 * page types (skewed), grades A–F, a few % nulls, scannedAt anywhere in the year before `now`
 * (bulk imports arrive in no time order). Deterministic: the same seed draws the same scans.
 */
export function realisticScans(now: number, seed = 1729): () => RealisticScan {
  // mulberry32: independent draws (the generator above multiplies past 2^53, so its draws correlate
  // and its scans fall into far fewer dimension combinations than real ones).
  const rand = () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
  const pick = <T>(list: readonly T[], skew = 1) => list[Math.floor(rand() ** skew * list.length)]!;
  const hosts = Array.from({ length: 5_000 }, (_, i) => `store-${i}.example.com`);
  const maybe = <T>(value: T, nulls = 0.03) => (rand() < nulls ? null : value);
  const bit = () => (rand() < 0.04 ? null : rand() < 0.7);
  let n = 0;
  return () => {
    const hostname = pick(hosts, 1.6);
    const scannedAt = now - Math.floor(rand() * SPAN_MS);
    const grade = pick(GRADES, 1.3);
    const percentage = Math.max(0, Math.round((100 - GRADES.indexOf(grade) * 15 - rand() * 14) * 10) / 10);
    const [country, platform, pageType] = [maybe(pick(REALISTIC_COUNTRIES, 1.8)), maybe(pick(SCAN_PLATFORMS, 1.4)), maybe(pick(PAGE_TYPES, 1.3))];
    const svcDetected = rand() < 0.3;
    const presence = PRESENCE_KEYS.map(bit);
    return { hostname, url: `https://${hostname}/p/${n++}`, scannedAt, country, platform, pageType, grade, percentage, svcDetected, presence };
  };
}

/** realisticScans written like the bulk route writes them: `generate(count)` inserts the next `count` in one transaction. */
export function realisticScanGenerator(sqlite: Database, now: number, seed = 1729) {
  const draw = realisticScans(now, seed);
  const signals = JSON.stringify({ title: { value: 'Organic Green Tea - Loose Leaf, 100 g', length: 37 }, lang: 'en' });
  const insert = sqlite.prepare(
    'INSERT INTO scans (id, hostname, url, scanned_at, received_at, country, platform, platform_confidence, page_type, grade, percentage, svc_detected, svc_version, vertical, ' +
      'has_title, has_description, has_json_ld, has_open_graph, has_h1, has_canonical, has_robots, signals, quality, data, trust) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,2)',
  );
  const bit = (value: boolean | null) => (value === null ? null : value ? 1 : 0);
  return sqlite.transaction((count: number, receivedAt = now) => {
    for (let i = 0; i < count; i++) {
      const s = draw();
      insert.run(newId(), s.hostname, s.url, s.scannedAt, receivedAt, s.country, s.platform, 0.9, s.pageType, s.grade, s.percentage, bit(s.svcDetected), '1.4.2', null,
        ...s.presence.map(bit), signals, JSON.stringify({ grade: s.grade, percentage: s.percentage }), '{}');
    }
  });
}

/** A realistic scan as the probe sends it (POST /api/v1/probe/telemetry or an item of scan-bulk). */
export function realisticScanReport(s: RealisticScan, scannedAt = s.scannedAt) {
  return {
    url: s.url,
    hostname: s.hostname,
    scannedAt: new Date(scannedAt).toISOString(),
    ...(s.country === null ? {} : { country: s.country }),
    ...(s.platform === null ? {} : { platform: { platform: s.platform, confidence: 0.9 } }),
    ...(s.pageType === null ? {} : { pageType: s.pageType }),
    svc: { detected: s.svcDetected, version: '1.4.2' },
    signals: { title: { value: 'Organic Green Tea - Loose Leaf, 100 g', length: 37 }, lang: 'en' },
    signalPresence: Object.fromEntries(PRESENCE_KEYS.flatMap((key, i) => (s.presence[i] === null ? [] : [[key, s.presence[i]]]))),
    quality: { grade: s.grade, percentage: s.percentage },
  };
}
