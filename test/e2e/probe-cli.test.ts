import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { tempDir } from '../helpers/app.ts';
import { runCli } from '../helpers/cli.ts';
import { startProbeServer, type ProbeServer } from '../helpers/probe.ts';
import { startFake } from '../fakes/http.ts';

// `svc probe send` as a CI step or a shell user runs it, against a spawned svc.
let svc: ProbeServer;
let tight: ProbeServer;
let files: ReturnType<typeof tempDir>;

beforeAll(async () => {
  [svc, tight] = await Promise.all([startProbeServer({ SVC_RATE_AGENT: '100000' }), startProbeServer({ SVC_RATE_AGENT: '60', SVC_RATE_AUTHED: '120' })]);
  files = tempDir('svc-probe-cli-');
});
afterAll(async () => {
  await Promise.all([svc?.stop(), tight?.stop()]);
  files?.remove();
});

const scan = (hostname: string, n: number, extra: Record<string, unknown> = {}) => ({
  hostname,
  url: `https://${hostname}/p/${n}`,
  scannedAt: new Date(Date.UTC(2026, 0, 1) + n * 1000).toISOString(),
  signals: { title: { value: `Café ${n} 🎉` } },
  ...extra,
});

function file(name: string, content: string): string {
  const target = path.join(files.dir, name);
  writeFileSync(target, content);
  return target;
}

const send = (args: string[], env: Record<string, string>, stdin?: string) => runCli(['probe', 'send', ...args], { env, stdin });

describe('svc probe send', () => {
  test('one scan from standard input, signed with SVC_PROBE_KEY', async () => {
    const key = await svc.key();
    const res = await send(['--url', svc.url], { SVC_PROBE_KEY: key }, JSON.stringify(scan('cli-stdin.example.com', 1)));
    expect(res).toMatchObject({ code: 0, stderr: '', json: { inserted: 1, skipped: 0, errors: [] } });
    const [stored] = await svc.scans('cli-stdin.example.com');
    expect(stored!.signals.title.value).toBe('Café 1 🎉');
  });

  test('one scan from a FILE with SVC_PROBE_TOKEN; "-" reads standard input; SVC_PROBE_URL stands in for --url', async () => {
    const token = await svc.token();
    const res = await send([file('scan.json', JSON.stringify(scan('cli-file.example.com', 1), null, 2))], { SVC_PROBE_TOKEN: token, SVC_PROBE_URL: svc.url });
    expect(res).toMatchObject({ code: 0, json: { inserted: 1 } });
    const dash = await send(['--url', svc.url, '-'], { SVC_PROBE_TOKEN: token }, JSON.stringify(scan('cli-file.example.com', 2)));
    expect(dash.code).toBe(0);
    expect(await svc.count('cli-file.example.com')).toBe(2);
  });

  test('--bulk reads NDJSON (blank lines ignored) and reports rejected items by index with exit code 3', async () => {
    const key = await svc.key();
    const lines = [scan('cli-ndjson.example.com', 0), scan('cli-ndjson.example.com', 1), { signals: {} }, scan('cli-ndjson.example.com', 3)].map((s) => JSON.stringify(s));
    const res = await send(['--bulk', '--url', svc.url, file('scans.ndjson', lines.join('\n') + '\n\n')], { SVC_PROBE_KEY: key });
    expect(res.code).toBe(3);
    expect(res.json).toEqual({ inserted: 3, skipped: 0, errors: [{ index: 2, error: 'missing_field', detail: 'hostname is required' }] });
    expect(await svc.count('cli-ndjson.example.com')).toBe(3);
  });

  test('--bulk reads a JSON array from standard input', async () => {
    const key = await svc.key();
    const scans = Array.from({ length: 1200 }, (_, n) => scan('cli-array.example.com', n));
    const res = await send(['--bulk', '--url', svc.url], { SVC_PROBE_KEY: key }, JSON.stringify(scans));
    expect(res).toMatchObject({ code: 0, json: { inserted: 1200, skipped: 0, errors: [] } });
    expect(await svc.count('cli-array.example.com')).toBe(1200);
  });

  test('credentials come only from the environment: --key and --token are not options', async () => {
    const key = await svc.key();
    for (const flag of ['--key', '--token']) {
      const res = await send([flag, key, '--url', svc.url], {}, JSON.stringify(scan('cli-argv.example.com', 1)));
      expect(res.code).toBe(2);
      expect(res.stderr).toContain(`Unknown option '${flag}'`);
    }
    const none = await send(['--url', svc.url], {}, JSON.stringify(scan('cli-argv.example.com', 1)));
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('SVC_PROBE_KEY');
    expect(none.stderr).toContain('SVC_PROBE_TOKEN');
    const both = await send(['--url', svc.url], { SVC_PROBE_KEY: key, SVC_PROBE_TOKEN: 'token' }, JSON.stringify(scan('cli-argv.example.com', 1)));
    expect(both.code).toBe(2);
    expect(await svc.count('cli-argv.example.com')).toBe(0);
  });

  test('bad input is exit code 2 and sends nothing', async () => {
    const env = { SVC_PROBE_KEY: await svc.key() };
    const cases: [string[], string | undefined, string][] = [
      [['--url', svc.url], '{"hostname": "cli-bad.example.com",', 'standard input is not valid JSON'],
      [['--bulk', '--url', svc.url], `${JSON.stringify(scan('cli-bad.example.com', 1))}\n{oops}\n`, 'standard input line 2 is not valid JSON'],
      [['--url', svc.url], JSON.stringify([scan('cli-bad.example.com', 1)]), 'send it with --bulk'],
      [['--bulk', '--url', svc.url], '\n\n', 'holds no scans'],
      [['--url', svc.url, path.join(files.dir, 'missing.json')], undefined, 'cannot read'],
      [[], JSON.stringify(scan('cli-bad.example.com', 1)), 'needs --url'],
      [['--url', 'ftp://svc.example.com'], JSON.stringify(scan('cli-bad.example.com', 1)), '--url must be an http(s) URL'],
      [['--bulk', '--batch-size', '0', '--url', svc.url], JSON.stringify([scan('cli-bad.example.com', 1)]), '--batch-size must be a whole number from 1 to 1000'],
    ];
    for (const [args, stdin, message] of cases) {
      const res = await send(args, env, stdin);
      expect({ args, code: res.code, stdout: res.stdout }).toEqual({ args, code: 2, stdout: '' });
      expect(res.stderr).toContain(message);
    }
    const unknown = await runCli(['probe', 'receive'], { env });
    expect(unknown.code).toBe(2);
    expect(await svc.count('cli-bad.example.com')).toBe(0);
  });

  test('a refusal by svc is exit code 1 with its error code and detail on stderr', async () => {
    const res = await send(['--url', svc.url], { SVC_PROBE_KEY: 'sk_live_not-a-key' }, JSON.stringify(scan('cli-refused.example.com', 1)));
    expect(res).toMatchObject({ code: 1, stdout: '' });
    expect(res.stderr).toContain('invalid_api_key: the API key is unknown, malformed or revoked');
  });

  test('--bulk with a lead token sends batches its tier takes (svc says which), says so, and stores every scan once, those without scannedAt too', async () => {
    const env = { SVC_PROBE_TOKEN: await tight.token() };
    const host = 'cli-tier.example.com';
    // More than the authed tier's 120 a minute; every third scan leaves scannedAt to svc.
    const lines = Array.from({ length: 125 }, (_, n) => {
      const { scannedAt, ...rest } = scan(host, n);
      return JSON.stringify(n % 3 === 0 ? rest : { ...rest, scannedAt });
    });
    const res = await send(['--bulk', '--url', tight.url], env, lines.join('\n'));
    expect(res).toMatchObject({ code: 0, json: { inserted: 125, skipped: 0, errors: [] } });
    expect(res.stderr).toContain('svc: the authed tier of these credentials takes 120 scans a minute: sending 120 per request (--batch-size N sends fewer)');
    expect(await tight.count(host)).toBe(125);
  }, 20_000);

  test('--batch-size N sends at most N scans per request; waits for rate limits are logged on stderr', async () => {
    const env = { SVC_PROBE_KEY: await tight.key() };
    const scans = Array.from({ length: 62 }, (_, n) => JSON.stringify(scan('cli-batch.example.com', n))).join('\n');
    // 30 and 30 drain the agent tier's 60; the last 2 wait for the bucket to refill.
    const batched = await send(['--bulk', '--batch-size', '30', '--url', tight.url], env, scans);
    expect(batched).toMatchObject({ code: 0, json: { inserted: 62, skipped: 0, errors: [] } });
    expect(batched.stderr).toMatch(/^svc: rate_limited \(429\); retry 1 in \d+\.\d s$/m);
    expect(batched.stderr).not.toContain('sending');
    expect(await tight.count('cli-batch.example.com')).toBe(62);
  }, 20_000);

  test('when svc refuses for good, stderr says what to do and stdout names the scans not stored', async () => {
    const input = [0, 1, 2].map((n) => JSON.stringify(scan('cli-refused-bulk.example.com', n))).join('\n');
    const revoked = await send(['--bulk', '--url', svc.url], { SVC_PROBE_TOKEN: 'not-a-token' }, input);
    expect(revoked).toMatchObject({ code: 1, json: { inserted: 0, skipped: 0, errors: [], unsent: [0, 1, 2] } });
    expect(revoked.stderr).toContain('svc: probe send failed: invalid_token: the probe token is unknown, rotated or revoked');
    expect(revoked.stderr).toContain('svc: SVC_PROBE_TOKEN is not a current lead token');
    expect(revoked.stderr).toContain('svc: 3 of 3 scans were not stored (the indexes in "unsent", from 0): svc stored none of them; send them again');

    // A wait longer than the CLI waits (maxDelay, 120 s): said with the credentials of a higher tier.
    const limited = startFake(() =>
      Response.json(
        { error: 'rate_limited', detail: 'the authed tier allows 50 scans per minute; retry in 300 s', tier: 'authed', limit: 50, retryAfter: 300 },
        { status: 429, headers: { 'retry-after': '300' } },
      ),
    );
    try {
      const res = await send(['--bulk', '--url', limited.url], { SVC_PROBE_TOKEN: 'token' }, input);
      expect(res).toMatchObject({ code: 1, json: { inserted: 0, unsent: [0, 1, 2] } });
      expect(res.stderr).toContain(
        'svc: the authed tier allows 50 scans a minute and asks to wait 300 s (Retry-After): send the scans not stored again after that, or with credentials of a higher tier: a signed API key (SVC_PROBE_KEY, from svc keys create --scopes probe:scan)',
      );
    } finally {
      limited.stop();
    }
  });
});
