import { existsSync } from 'node:fs';
import path from 'node:path';
import { isHostname } from './lib/hostname.ts';
import type { BodySettings } from './lib/body-budget.ts';
import { ACCESS_LOG_MODES, LOG_LEVELS, type LogSettings } from './observability/log.ts';

/** Typed, validated configuration (DESIGN §3): flags win over `SVC_*` environment variables. */
export interface Config {
  http: { hostname: string; port: number };
  dataDir: string;
  databaseFile: string;
  baseUrl: string;
  /** False when baseUrl was derived from the listen address (so it follows the port actually bound). */
  baseUrlExplicit: boolean;
  geoipDb: string | null;
  trustProxy: number;
  maxBodyBytes: number;
  rates: { anonymous: number; authed: number; agent: number; webhook: number };
  /** Deadlines, minimum rate and in-flight byte caps for request bodies (docs/limits.md). */
  body: BodySettings;
  /** How anonymous clients are told apart and held back as a whole, and how many buckets are kept. */
  anonymousLimits: {
    /** IPv6 clients share one anonymous bucket per network of this many bits (SVC_RATE_IPV6_PREFIX). */
    ipv6PrefixBits: number;
    /** Requests per minute for all anonymous clients together (SVC_RATE_ANONYMOUS_GLOBAL). */
    globalPerMinute: number;
    /** Live rate-limit buckets at most, all tiers together (SVC_RATE_BUCKETS). */
    maxBuckets: number;
  };
  platformAAppSecret: string | null;
  encryptionKey: Uint8Array | null;
  platformAShopSuffix: string;
  platformAApiBase: string | null;
  platformBApiBase: string;
  /**
   * Whether svc may connect to store-supplied targets (platform C's site URL, a platform-A shop
   * domain) on loopback, private, link-local or metadata addresses (SVC_ALLOW_PRIVATE_TARGETS=1):
   * for stores on svc's own network. Operator-set API bases are always trusted.
   */
  allowPrivateTargets: boolean;
  /** Scans older than this many days are deleted in the background; 0 keeps them forever. */
  scanRetentionDays: number;
  /** Hours between scheduled catalogue reconciliation passes per store; 0 turns them off. */
  syncIntervalHours: number;
  /**
   * How long a started background job is owned by its instance (renewed every third of it while it
   * runs); a job whose instance died is taken by another once it ends (SVC_JOB_LEASE_SECONDS).
   */
  jobLeaseSeconds: number;
  /** Days other records are kept before the background sweep deletes them (src/retention/records.ts); 0 keeps them forever. */
  retention: { webhookDeliveryDays: number; jobDays: number; storeEventDays: number; orderSignalDays: number; unusedLeadDays: number };
  /** Most bytes of rendered signals held in memory (src/signals/service.ts). */
  signalCacheBytes: number;
  /** Most bytes of a scan's `data` (unknown fields and refused values, as JSON); a scan over it is refused. */
  maxScanDataBytes: number;
  log: LogSettings;
  /** Origins (or `*`) allowed to call the probe routes from a browser with a lead token (CORS); empty: none. */
  probeCorsOrigins: string[];
  /** Instance name and contact line shown on the landing page and in the console. */
  site: { name: string; contact: string | null };
  /** A console session ends after this many minutes without a request. */
  sessionIdleMinutes: number;
  /**
   * The Redis that keeps the rate-limit buckets every instance shares (--redis-url / SVC_REDIS_URL),
   * and how long a take waits for it before this instance answers it from its own buckets
   * (SVC_REDIS_TIMEOUT_MS); null: each instance keeps its own buckets.
   */
  redis: { url: string; takeTimeoutMs: number } | null;
  /**
   * The PostgreSQL database that holds svc's state instead of the SQLite file in `dataDir`
   * (--database-url / SVC_DATABASE_URL), with at most `poolMax` connections from this instance
   * (SVC_DATABASE_POOL); null: SQLite.
   */
  postgres: { url: string; poolMax: number } | null;
}

/** Names the offending setting; the CLI prints it as one line and exits non-zero. */
export class ConfigError extends Error {
  constructor(
    readonly setting: string,
    problem: string,
  ) {
    super(`invalid ${setting}: ${problem}`);
    this.name = 'ConfigError';
  }
}

export type Flags = { http?: string; 'data-dir'?: string; 'base-url'?: string; 'redis-url'?: string; 'database-url'?: string };
export type Env = Record<string, string | undefined>;

interface Source {
  value: string;
  setting: string;
}

/** The flag if given, else the environment variable; remembers which one for error messages. */
function pick(flags: Flags, flag: keyof Flags | null, env: Env, name: string): Source | null {
  const fromFlag = flag ? flags[flag] : undefined;
  if (fromFlag !== undefined) return { value: fromFlag, setting: `--${flag}` };
  const fromEnv = env[name];
  if (fromEnv !== undefined && fromEnv !== '') return { value: fromEnv, setting: name };
  return null;
}

function parseHostPort(src: Source): { hostname: string; port: number } {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/.exec(src.value.trim());
  const port = match ? Number(match[3]) : NaN;
  if (!match || port > 65535) {
    throw new ConfigError(src.setting, `expected <host>:<port> with a port from 0 to 65535, got ${JSON.stringify(src.value)}`);
  }
  return { hostname: (match[1] ?? match[2])!, port };
}

/** svc answers at the root of its host: its pages, the widget and the signal links all assume it, so a path prefix would half work. */
function parseOrigin(src: Source): string {
  const url = parseHttpUrl(src);
  if (new URL(url).pathname !== '/') throw new ConfigError(src.setting, `expected an origin such as https://svc.example.com: svc is served at the root of its host (no path prefix), got ${JSON.stringify(src.value)}`);
  return url;
}

function parseHttpUrl(src: Source): string {
  let url: URL;
  try {
    url = new URL(src.value);
  } catch {
    throw new ConfigError(src.setting, `expected an absolute http(s) URL, got ${JSON.stringify(src.value)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(src.setting, `expected an http or https URL, got ${JSON.stringify(src.value)}`);
  }
  if (url.search || url.hash) throw new ConfigError(src.setting, 'must not carry a query string or fragment');
  return url.href.replace(/\/+$/, '');
}

function parseInteger(src: Source, min: number, max: number): number {
  const text = src.value.trim();
  const n = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n) || n < min || n > max) {
    throw new ConfigError(src.setting, `expected a whole number from ${min} to ${max}, got ${JSON.stringify(src.value)}`);
  }
  return n;
}

/** 32 bytes given as 64 hex characters or as base64 / base64url. */
function parseKey32(src: Source): Uint8Array {
  const text = src.value.trim();
  let bytes: Buffer | null = null;
  if (/^[0-9a-fA-F]{64}$/.test(text)) bytes = Buffer.from(text, 'hex');
  else if (/^[A-Za-z0-9+/_-]{43}={0,1}$/.test(text)) bytes = Buffer.from(text, 'base64');
  if (!bytes || bytes.length !== 32) {
    throw new ConfigError(src.setting, 'expected 32 bytes encoded as 64 hex characters or base64 (generate one with `openssl rand -base64 32`)');
  }
  return new Uint8Array(bytes);
}

function parseDomainSuffix(src: Source): string {
  const text = src.value.trim().toLowerCase();
  if (text === 'localhost' || !isHostname(text)) {
    throw new ConfigError(src.setting, `expected a domain such as myplatform-a.com, got ${JSON.stringify(src.value)}`);
  }
  return text;
}

function oneOf<T extends string>(src: Source, values: readonly T[]): T {
  const text = src.value.trim().toLowerCase();
  if (!(values as readonly string[]).includes(text)) throw new ConfigError(src.setting, `expected one of ${values.join(', ')}, got ${JSON.stringify(src.value)}`);
  return text as T;
}

/** `*`, or a comma-separated list of origins (`https://host[:port]`, `chrome-extension://<id>`, ...). */
function parseOrigins(src: Source): string[] {
  const entries = src.value.split(',').map((entry) => entry.trim()).filter(Boolean);
  return entries.map((entry) => {
    if (entry === '*') return entry;
    let url: URL | null = null;
    try {
      url = new URL(entry);
    } catch {
      url = null;
    }
    // An origin is scheme://host[:port] exactly (one trailing slash tolerated): no path or query.
    const origin = url && url.host !== '' ? `${url.protocol}//${url.host}` : null;
    if (!origin || origin !== entry.toLowerCase().replace(/\/$/, '')) {
      throw new ConfigError(src.setting, `expected * or comma-separated origins such as https://scanner.example.com or chrome-extension://<id>, got ${JSON.stringify(entry)}`);
    }
    return origin;
  });
}

/**
 * A service URL that may hold a password, kept when `fits` accepts it; a refusal says what was
 * `expected` and never quotes the value.
 */
function parseSecretUrl(src: Source, expected: string, fits: (url: URL) => boolean): string {
  const refusal = () => new ConfigError(src.setting, `expected ${expected} (the value is not repeated here: it may hold a password)`);
  let url: URL;
  try {
    url = new URL(src.value.trim());
  } catch {
    throw refusal();
  }
  if (url.hostname === '' || url.hash || !fits(url)) throw refusal();
  return url.href;
}

/** A `redis://` or `rediss://` (TLS) URL: `[user:password@]host[:port][/db]`. */
const parseRedisUrl = (src: Source) =>
  parseSecretUrl(src, 'redis://[user:password@]host[:port][/db] or rediss://...', (url) => (url.protocol === 'redis:' || url.protocol === 'rediss:') && /^(\/\d{0,2})?$/.test(url.pathname) && !url.search);

/** A `postgres://` or `postgresql://` URL: `[user[:password]@]host[:port]/database[?sslmode=...]`. */
const parsePostgresUrl = (src: Source) =>
  parseSecretUrl(src, 'postgres://[user[:password]@]host[:port]/database', (url) => (url.protocol === 'postgres:' || url.protocol === 'postgresql:') && /^\/[^/]+$/.test(url.pathname));

function nonEmpty(src: Source): string {
  if (src.value.trim() === '') throw new ConfigError(src.setting, 'must not be empty');
  return src.value;
}

/** One line of plain text for the pages (escaped where rendered), trimmed and at most `max` characters. */
function siteText(src: Source | null, max: number): string | null {
  if (!src) return null;
  const text = src.value.trim();
  if (text.length > max || /[\u0000-\u001f\u007f]/.test(text)) throw new ConfigError(src.setting, `expected one line of at most ${max} characters`);
  return text || null;
}

/** `http://host:port` for a listen address (IPv6 hosts in brackets). */
export function listenUrl({ hostname, port }: Config['http']): string {
  return `http://${hostname.includes(':') ? `[${hostname}]` : hostname}:${port}`;
}

/** The same configuration listening on `port`; a base URL derived from the listen address follows it. */
export function withListenPort(config: Config, port: number): Config {
  const http = { ...config.http, port };
  return { ...config, http, baseUrl: config.baseUrlExplicit ? config.baseUrl : listenUrl(http) };
}

const MIB = 1024 * 1024;

/**
 * Body deadlines and caps. By default one client may hold two of the largest bodies at once (a bulk
 * body is up to 16 MiB, or SVC_MAX_BODY_BYTES if larger) and all clients together four times that.
 */
function bodySettings(int: (name: string, fallback: number, min: number, max: number) => number, maxBodyBytes: number): BodySettings {
  const perClient = int('SVC_BODY_BUFFER_PER_CLIENT_BYTES', 2 * Math.max(16 * MIB, maxBodyBytes), 64 * 1024, 64 * 1024 * MIB);
  return {
    timeoutMs: int('SVC_BODY_TIMEOUT_MS', 60_000, 100, 3_600_000),
    minBytesPerSecond: int('SVC_BODY_MIN_BYTES_PER_SECOND', 1024, 0, 1_000_000_000),
    graceMs: int('SVC_BODY_GRACE_MS', 5_000, 0, 3_600_000),
    maxBufferedPerClient: perClient,
    maxBufferedBytes: int('SVC_BODY_BUFFER_BYTES', 4 * perClient, 64 * 1024, 256 * 1024 * MIB),
  };
}

export function loadConfig(flags: Flags, env: Env): Config {
  const httpSrc = pick(flags, 'http', env, 'SVC_HTTP');
  const http = httpSrc ? parseHostPort(httpSrc) : { hostname: '127.0.0.1', port: 3000 };

  const dataDirSrc = pick(flags, 'data-dir', env, 'SVC_DATA_DIR');
  const dataDir = path.resolve(dataDirSrc ? nonEmpty(dataDirSrc) : './data');

  const baseUrlSrc = pick(flags, 'base-url', env, 'SVC_BASE_URL');
  const baseUrl = baseUrlSrc ? parseOrigin(baseUrlSrc) : listenUrl(http);

  const geoSrc = pick(flags, null, env, 'SVC_GEOIP_DB');
  if (geoSrc && !existsSync(geoSrc.value)) throw new ConfigError(geoSrc.setting, `no file at ${JSON.stringify(geoSrc.value)}`);

  const int = (name: string, fallback: number, min: number, max: number) => {
    const src = pick(flags, null, env, name);
    return src ? parseInteger(src, min, max) : fallback;
  };

  const maxBodyBytes = int('SVC_MAX_BODY_BYTES', 524_288, 1024, 64 * 1024 * 1024);
  const secretSrc = pick(flags, null, env, 'SVC_PLATFORM_A_APP_SECRET');
  const keySrc = pick(flags, null, env, 'SVC_ENCRYPTION_KEY');
  const suffixSrc = pick(flags, null, env, 'SVC_PLATFORM_A_SHOP_SUFFIX');
  const aBaseSrc = pick(flags, null, env, 'SVC_PLATFORM_A_API_BASE');
  const bBaseSrc = pick(flags, null, env, 'SVC_PLATFORM_B_API_BASE');
  const levelSrc = pick(flags, null, env, 'SVC_LOG_LEVEL');
  const accessSrc = pick(flags, null, env, 'SVC_ACCESS_LOG');
  const corsSrc = pick(flags, null, env, 'SVC_PROBE_CORS_ORIGINS');
  const privateSrc = pick(flags, null, env, 'SVC_ALLOW_PRIVATE_TARGETS');
  const redisSrc = pick(flags, 'redis-url', env, 'SVC_REDIS_URL');
  const postgresSrc = pick(flags, 'database-url', env, 'SVC_DATABASE_URL');

  return {
    http,
    dataDir,
    databaseFile: path.join(dataDir, 'svc.db'),
    baseUrl,
    baseUrlExplicit: baseUrlSrc !== null,
    geoipDb: geoSrc ? path.resolve(geoSrc.value) : null,
    trustProxy: int('SVC_TRUST_PROXY', 0, 0, 32),
    maxBodyBytes,
    rates: {
      anonymous: int('SVC_RATE_ANONYMOUS', 10, 1, 1_000_000),
      authed: int('SVC_RATE_AUTHED', 50, 1, 1_000_000),
      agent: int('SVC_RATE_AGENT', 1000, 1, 10_000_000),
      webhook: int('SVC_RATE_WEBHOOK', 600, 1, 10_000_000),
    },
    body: bodySettings(int, maxBodyBytes),
    anonymousLimits: {
      ipv6PrefixBits: int('SVC_RATE_IPV6_PREFIX', 64, 16, 128),
      globalPerMinute: int('SVC_RATE_ANONYMOUS_GLOBAL', 3000, 1, 10_000_000),
      maxBuckets: int('SVC_RATE_BUCKETS', 100_000, 100, 10_000_000),
    },
    platformAAppSecret: secretSrc ? nonEmpty(secretSrc) : null,
    encryptionKey: keySrc ? parseKey32(keySrc) : null,
    platformAShopSuffix: suffixSrc ? parseDomainSuffix(suffixSrc) : 'myplatform-a.com',
    platformAApiBase: aBaseSrc ? parseHttpUrl(aBaseSrc) : null,
    platformBApiBase: bBaseSrc ? parseHttpUrl(bBaseSrc) : 'https://api.platform-b.com',
    allowPrivateTargets: privateSrc ? oneOf(privateSrc, ['0', '1'] as const) === '1' : false,
    scanRetentionDays: int('SVC_SCAN_RETENTION_DAYS', 0, 0, 36_500),
    syncIntervalHours: int('SVC_SYNC_INTERVAL_HOURS', 24, 0, 8760),
    jobLeaseSeconds: int('SVC_JOB_LEASE_SECONDS', 60, 10, 3600),
    retention: {
      webhookDeliveryDays: int('SVC_WEBHOOK_DELIVERY_RETENTION_DAYS', 30, 0, 36_500),
      jobDays: int('SVC_JOB_RETENTION_DAYS', 30, 0, 36_500),
      storeEventDays: int('SVC_STORE_EVENT_RETENTION_DAYS', 365, 0, 36_500),
      orderSignalDays: int('SVC_ORDER_SIGNAL_RETENTION_DAYS', 90, 0, 36_500),
      unusedLeadDays: int('SVC_UNUSED_LEAD_RETENTION_DAYS', 30, 0, 36_500),
    },
    signalCacheBytes: int('SVC_SIGNAL_CACHE_BYTES', 32 * 1024 * 1024, 65_536, 4 * 1024 * 1024 * 1024),
    maxScanDataBytes: int('SVC_MAX_SCAN_DATA_BYTES', 16_384, 0, 64 * 1024 * 1024),
    log: {
      level: levelSrc ? oneOf(levelSrc, LOG_LEVELS) : 'info',
      access: accessSrc ? oneOf(accessSrc, ACCESS_LOG_MODES) : 'all',
      linesPerSecond: int('SVC_LOG_RATE', 100, 1, 1_000_000),
    },
    probeCorsOrigins: corsSrc ? parseOrigins(corsSrc) : [],
    site: { name: siteText(pick(flags, null, env, 'SVC_SITE_NAME'), 80) ?? 'svc', contact: siteText(pick(flags, null, env, 'SVC_SITE_CONTACT'), 300) },
    sessionIdleMinutes: int('SVC_SESSION_IDLE_MINUTES', 720, 1, 525_600),
    redis: redisSrc ? { url: parseRedisUrl(redisSrc), takeTimeoutMs: int('SVC_REDIS_TIMEOUT_MS', 5, 1, 1000) } : null,
    postgres: postgresSrc ? { url: parsePostgresUrl(postgresSrc), poolMax: int('SVC_DATABASE_POOL', 10, 1, 1000) } : null,
  };
}
