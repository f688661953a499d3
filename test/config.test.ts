import { describe, expect, test } from 'bun:test';
import path from 'node:path';
import { ConfigError, loadConfig, withListenPort } from '../src/config.ts';

const expectInvalid = (run: () => unknown, setting: string) => {
  let caught: unknown;
  try {
    run();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(ConfigError);
  expect((caught as ConfigError).setting).toBe(setting);
  expect((caught as Error).message).toStartWith(`invalid ${setting}: `);
  expect((caught as Error).message).not.toContain('\n');
};

const refusalOf = (run: () => unknown): string => {
  try {
    run();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected a refusal');
};

describe('config', () => {
  test('embedded defaults serve on 127.0.0.1:3000 with ./data/svc.db', () => {
    const config = loadConfig({}, {});
    expect(config.http).toEqual({ hostname: '127.0.0.1', port: 3000 });
    expect(config.databaseFile).toBe(path.resolve('data/svc.db'));
    expect(config.baseUrl).toBe('http://127.0.0.1:3000');
    expect(config.maxBodyBytes).toBe(524288);
    expect(config.rates).toEqual({ anonymous: 10, authed: 50, agent: 1000, webhook: 600 });
    expect(config.anonymousLimits).toEqual({ ipv6PrefixBits: 64, globalPerMinute: 3000, maxBuckets: 100_000 });
    expect(config.body).toEqual({ timeoutMs: 60_000, minBytesPerSecond: 1024, graceMs: 5_000, maxBufferedPerClient: 32 * 1024 * 1024, maxBufferedBytes: 128 * 1024 * 1024 });
    expect(config.trustProxy).toBe(0);
    expect(config.encryptionKey).toBeNull();
    expect(config.platformAShopSuffix).toBe('myplatform-a.com');
    expect(config.platformBApiBase).toBe('https://api.platform-b.com');
    expect(config.scanRetentionDays).toBe(0);
  });

  test('SVC_SCAN_RETENTION_DAYS is a whole number of days from 0 to 36500', () => {
    expect(loadConfig({}, { SVC_SCAN_RETENTION_DAYS: '90' }).scanRetentionDays).toBe(90);
    expectInvalid(() => loadConfig({}, { SVC_SCAN_RETENTION_DAYS: '-1' }), 'SVC_SCAN_RETENTION_DAYS');
    expectInvalid(() => loadConfig({}, { SVC_SCAN_RETENTION_DAYS: '1.5' }), 'SVC_SCAN_RETENTION_DAYS');
    expectInvalid(() => loadConfig({}, { SVC_SCAN_RETENTION_DAYS: '36501' }), 'SVC_SCAN_RETENTION_DAYS');
  });

  test('logging: SVC_LOG_LEVEL, SVC_ACCESS_LOG and SVC_LOG_RATE, with defaults info, all, 100 lines/s', () => {
    expect(loadConfig({}, {}).log).toEqual({ level: 'info', access: 'all', linesPerSecond: 100 });
    expect(loadConfig({}, { SVC_LOG_LEVEL: 'WARN', SVC_ACCESS_LOG: 'errors', SVC_LOG_RATE: '5' }).log).toEqual({ level: 'warn', access: 'errors', linesPerSecond: 5 });
    expectInvalid(() => loadConfig({}, { SVC_LOG_LEVEL: 'verbose' }), 'SVC_LOG_LEVEL');
    expectInvalid(() => loadConfig({}, { SVC_ACCESS_LOG: 'some' }), 'SVC_ACCESS_LOG');
    expectInvalid(() => loadConfig({}, { SVC_LOG_RATE: '0' }), 'SVC_LOG_RATE');
  });

  test('SVC_PROBE_CORS_ORIGINS: * or a list of exact origins, none by default', () => {
    expect(loadConfig({}, {}).probeCorsOrigins).toEqual([]);
    expect(loadConfig({}, { SVC_PROBE_CORS_ORIGINS: 'https://Scanner.example.com, chrome-extension://abcdefghijklmnopabcdefghijklmnop, http://localhost:5173/' }).probeCorsOrigins).toEqual([
      'https://scanner.example.com',
      'chrome-extension://abcdefghijklmnopabcdefghijklmnop',
      'http://localhost:5173',
    ]);
    expect(loadConfig({}, { SVC_PROBE_CORS_ORIGINS: '*' }).probeCorsOrigins).toEqual(['*']);
    expectInvalid(() => loadConfig({}, { SVC_PROBE_CORS_ORIGINS: 'scanner.example.com' }), 'SVC_PROBE_CORS_ORIGINS');
    expectInvalid(() => loadConfig({}, { SVC_PROBE_CORS_ORIGINS: 'https://scanner.example.com/app' }), 'SVC_PROBE_CORS_ORIGINS');
  });

  test('SVC_SITE_NAME and SVC_SITE_CONTACT: one line each, the name defaults to svc', () => {
    expect(loadConfig({}, {}).site).toEqual({ name: 'svc', contact: null });
    expect(loadConfig({}, { SVC_SITE_NAME: ' Probe Hub ', SVC_SITE_CONTACT: 'ops@example.com' }).site).toEqual({ name: 'Probe Hub', contact: 'ops@example.com' });
    expectInvalid(() => loadConfig({}, { SVC_SITE_NAME: 'a\nb' }), 'SVC_SITE_NAME');
    expectInvalid(() => loadConfig({}, { SVC_SITE_CONTACT: 'x'.repeat(301) }), 'SVC_SITE_CONTACT');
  });

  test('SVC_SESSION_IDLE_MINUTES defaults to 12 hours', () => {
    expect(loadConfig({}, {}).sessionIdleMinutes).toBe(720);
    expect(loadConfig({}, { SVC_SESSION_IDLE_MINUTES: '30' }).sessionIdleMinutes).toBe(30);
    expectInvalid(() => loadConfig({}, { SVC_SESSION_IDLE_MINUTES: '0' }), 'SVC_SESSION_IDLE_MINUTES');
  });

  test('SVC_JOB_LEASE_SECONDS defaults to a minute, from 10 s to an hour', () => {
    expect(loadConfig({}, {}).jobLeaseSeconds).toBe(60);
    expect(loadConfig({}, { SVC_JOB_LEASE_SECONDS: '10' }).jobLeaseSeconds).toBe(10);
    expectInvalid(() => loadConfig({}, { SVC_JOB_LEASE_SECONDS: '9' }), 'SVC_JOB_LEASE_SECONDS');
    expectInvalid(() => loadConfig({}, { SVC_JOB_LEASE_SECONDS: '3601' }), 'SVC_JOB_LEASE_SECONDS');
  });

  test('--redis-url / SVC_REDIS_URL: a redis:// or rediss:// URL, none by default; a refusal never repeats the value (it may hold the password)', () => {
    expect(loadConfig({}, {}).redis).toBeNull();
    expect(loadConfig({}, { SVC_REDIS_URL: 'redis://:pw@10.0.0.5:6379/2' }).redis).toEqual({ url: 'redis://:pw@10.0.0.5:6379/2', takeTimeoutMs: 5 });
    expect(loadConfig({ 'redis-url': 'rediss://svc:pw@redis.internal' }, { SVC_REDIS_URL: 'redis://other:6379', SVC_REDIS_TIMEOUT_MS: '20' }).redis).toEqual({ url: 'rediss://svc:pw@redis.internal', takeTimeoutMs: 20 });
    for (const value of ['http://:Secret-1@host:6379', 'redis://:Secret-1@host:notaport', 'redis://:Secret-1@host:6379/zero', 'redis://:Secret-1@host:6379/0?db=1', 'redis://:Secret-1@', 'Secret-1']) {
      expectInvalid(() => loadConfig({}, { SVC_REDIS_URL: value }), 'SVC_REDIS_URL');
      expect(refusalOf(() => loadConfig({}, { SVC_REDIS_URL: value }))).not.toContain('Secret-1');
    }
    expectInvalid(() => loadConfig({ 'redis-url': 'redis://:Secret-1@host:99999' }, {}), '--redis-url');
    expectInvalid(() => loadConfig({}, { SVC_REDIS_URL: 'redis://host', SVC_REDIS_TIMEOUT_MS: '0' }), 'SVC_REDIS_TIMEOUT_MS');
  });

  test('--database-url / SVC_DATABASE_URL: a postgres:// or postgresql:// URL naming a database, SQLite by default; SVC_DATABASE_POOL bounds its connections; a refusal never repeats the value (it may hold the password)', () => {
    expect(loadConfig({}, {}).postgres).toBeNull();
    expect(loadConfig({}, { SVC_DATABASE_URL: 'postgres://svc:pw@10.0.0.5:5432/svc' }).postgres).toEqual({ url: 'postgres://svc:pw@10.0.0.5:5432/svc', poolMax: 10 });
    expect(loadConfig({ 'database-url': 'postgresql://svc:pw@db.internal/svc?sslmode=require' }, { SVC_DATABASE_URL: 'postgres://other/x', SVC_DATABASE_POOL: '25' }).postgres).toEqual({
      url: 'postgresql://svc:pw@db.internal/svc?sslmode=require',
      poolMax: 25,
    });
    for (const value of ['mysql://svc:Secret-1@host/svc', 'postgres://svc:Secret-1@host:notaport/svc', 'postgres://svc:Secret-1@host:5432', 'postgres://svc:Secret-1@host:5432/', 'postgres://svc:Secret-1@host/a/b', 'postgres://svc:Secret-1@/svc', 'Secret-1']) {
      expectInvalid(() => loadConfig({}, { SVC_DATABASE_URL: value }), 'SVC_DATABASE_URL');
      expect(refusalOf(() => loadConfig({}, { SVC_DATABASE_URL: value }))).not.toContain('Secret-1');
    }
    expectInvalid(() => loadConfig({ 'database-url': 'postgres://svc:Secret-1@host:99999/svc' }, {}), '--database-url');
    for (const pool of ['0', '1001', 'ten']) expectInvalid(() => loadConfig({}, { SVC_DATABASE_URL: 'postgres://host/svc', SVC_DATABASE_POOL: pool }), 'SVC_DATABASE_POOL');
  });

  test('flags win over SVC_* environment variables', () => {
    const config = loadConfig({ http: '0.0.0.0:8080', 'data-dir': '/tmp/x' }, { SVC_HTTP: '127.0.0.1:1', SVC_DATA_DIR: '/tmp/y' });
    expect(config.http).toEqual({ hostname: '0.0.0.0', port: 8080 });
    expect(config.dataDir).toBe('/tmp/x');
  });

  test('environment variables are read', () => {
    const config = loadConfig({}, {
      SVC_HTTP: '[::1]:4000',
      SVC_BASE_URL: 'https://svc.example.com/',
      SVC_TRUST_PROXY: '2',
      SVC_MAX_BODY_BYTES: '2048',
      SVC_RATE_ANONYMOUS: '5',
      SVC_RATE_AUTHED: '6',
      SVC_RATE_AGENT: '7',
      SVC_RATE_WEBHOOK: '8',
      SVC_RATE_IPV6_PREFIX: '56',
      SVC_RATE_ANONYMOUS_GLOBAL: '90',
      SVC_RATE_BUCKETS: '500',
      SVC_BODY_TIMEOUT_MS: '9000',
      SVC_BODY_MIN_BYTES_PER_SECOND: '100',
      SVC_BODY_GRACE_MS: '2000',
      SVC_BODY_BUFFER_PER_CLIENT_BYTES: '1048576',
      SVC_BODY_BUFFER_BYTES: '4194304',
      SVC_ENCRYPTION_KEY: 'a'.repeat(64),
      SVC_PLATFORM_A_SHOP_SUFFIX: 'Shops.Example.com',
    });
    expect(config.http).toEqual({ hostname: '::1', port: 4000 });
    expect(config.baseUrl).toBe('https://svc.example.com');
    expect(config.trustProxy).toBe(2);
    expect(config.maxBodyBytes).toBe(2048);
    expect(config.rates).toEqual({ anonymous: 5, authed: 6, agent: 7, webhook: 8 });
    expect(config.anonymousLimits).toEqual({ ipv6PrefixBits: 56, globalPerMinute: 90, maxBuckets: 500 });
    expect(config.body).toEqual({ timeoutMs: 9000, minBytesPerSecond: 100, graceMs: 2000, maxBufferedPerClient: 1048576, maxBufferedBytes: 4194304 });
    expect(config.encryptionKey?.length).toBe(32);
    expect(config.platformAShopSuffix).toBe('shops.example.com');
  });

  test('the base URL defaults to the listen address', () => {
    expect(loadConfig({ http: '[::1]:4000' }, {}).baseUrl).toBe('http://[::1]:4000');
  });

  test('a derived base URL follows the port actually bound; an explicit one does not', () => {
    expect(withListenPort(loadConfig({ http: '127.0.0.1:0' }, {}), 4321).baseUrl).toBe('http://127.0.0.1:4321');
    expect(withListenPort(loadConfig({ http: '127.0.0.1:0', 'base-url': 'https://svc.example.com' }, {}), 4321).baseUrl).toBe('https://svc.example.com');
  });

  test('an encryption key may be base64', () => {
    const key = Buffer.alloc(32, 7).toString('base64');
    expect(loadConfig({}, { SVC_ENCRYPTION_KEY: key }).encryptionKey).toEqual(new Uint8Array(32).fill(7));
  });

  test('each invalid value names its setting', () => {
    expectInvalid(() => loadConfig({ http: 'localhost' }, {}), '--http');
    expectInvalid(() => loadConfig({}, { SVC_HTTP: '127.0.0.1:70000' }), 'SVC_HTTP');
    expectInvalid(() => loadConfig({ 'base-url': 'ftp://x' }, {}), '--base-url');
    expectInvalid(() => loadConfig({}, { SVC_BASE_URL: 'not a url' }), 'SVC_BASE_URL');
    expectInvalid(() => loadConfig({}, { SVC_BASE_URL: 'https://example.com/svc' }), 'SVC_BASE_URL');
    expectInvalid(() => loadConfig({}, { SVC_TRUST_PROXY: '-1' }), 'SVC_TRUST_PROXY');
    expectInvalid(() => loadConfig({}, { SVC_MAX_BODY_BYTES: '12kb' }), 'SVC_MAX_BODY_BYTES');
    expectInvalid(() => loadConfig({}, { SVC_RATE_ANONYMOUS: '0' }), 'SVC_RATE_ANONYMOUS');
    expectInvalid(() => loadConfig({}, { SVC_RATE_AGENT: '1.5' }), 'SVC_RATE_AGENT');
    expectInvalid(() => loadConfig({}, { SVC_ENCRYPTION_KEY: 'short' }), 'SVC_ENCRYPTION_KEY');
    expectInvalid(() => loadConfig({}, { SVC_GEOIP_DB: '/nonexistent/file.mmdb' }), 'SVC_GEOIP_DB');
    expectInvalid(() => loadConfig({}, { SVC_PLATFORM_A_SHOP_SUFFIX: 'no spaces.com x' }), 'SVC_PLATFORM_A_SHOP_SUFFIX');
    expectInvalid(() => loadConfig({}, { SVC_PLATFORM_A_API_BASE: 'localhost:1234' }), 'SVC_PLATFORM_A_API_BASE');
    expectInvalid(() => loadConfig({}, { SVC_PLATFORM_B_API_BASE: 'http://x/?q=1' }), 'SVC_PLATFORM_B_API_BASE');
    expectInvalid(() => loadConfig({ 'data-dir': ' ' }, {}), '--data-dir');
  });
});
