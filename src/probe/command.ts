// `svc probe send`: the first-party scanner client from the command line. It imports the client's
// source, so the compiled binary carries the same code that clients/probe publishes.
import { readFileSync } from 'node:fs';
import { createProbeClient, ProbeError, type BatchSizeChange, type ProbeResult, type RetryInfo, type TelemetryPayload } from '../../clients/probe/src/index.ts';

export const PROBE_USAGE = '  svc probe send [--bulk] [--batch-size N] --url URL [FILE|-]   (credentials: SVC_PROBE_KEY or SVC_PROBE_TOKEN)';

/** Exit codes of `svc probe send` (docs/probe-client.md). */
export const PROBE_EXIT = {
  /** Every scan stored (or skipped as a duplicate). */
  ok: 0,
  /** svc refused the request or could not be reached (after the retries). */
  failed: 1,
  /** Bad flags, input or credentials: nothing was sent. */
  usage: 2,
  /** Sent, but svc rejected some bulk items (listed in `errors`). */
  rejected: 3,
} as const;

export interface ProbeFlags {
  url?: string;
  bulk?: boolean;
  'batch-size'?: string;
}

class InputError extends Error {}

/** Scans from `text`: one JSON object, or for bulk a JSON array or NDJSON (blank lines ignored). */
export function parseScans(text: string, bulk: boolean, source: string): TelemetryPayload[] {
  const parse = (json: string, where: string) => {
    try {
      return JSON.parse(json) as unknown;
    } catch (error) {
      throw new InputError(`${where} is not valid JSON: ${(error as Error).message}`);
    }
  };
  if (!bulk) {
    const scan = parse(text, source);
    if (Array.isArray(scan)) throw new InputError(`${source} holds a JSON array; send it with --bulk`);
    return [scan as TelemetryPayload];
  }
  const scans = text.trimStart().startsWith('[')
    ? (parse(text, source) as TelemetryPayload[])
    : text.split('\n').flatMap((line, i) => (line.trim() === '' ? [] : [parse(line, `${source} line ${i + 1}`) as TelemetryPayload]));
  if (scans.length === 0) throw new InputError(`${source} holds no scans`);
  return scans;
}

function readInput(rest: string[]): { text: string; source: string } {
  if (rest.length > 1) throw new InputError('probe send takes at most one FILE (or - for standard input)');
  const file = rest[0] ?? '-';
  if (file !== '-') {
    try {
      return { text: readFileSync(file, 'utf8'), source: file };
    } catch (error) {
      throw new InputError(`cannot read ${file}: ${(error as Error).message}`);
    }
  }
  if (process.stdin.isTTY) throw new InputError('no input: pass a FILE, or pipe the scan JSON to standard input');
  return { text: readFileSync(0, 'utf8'), source: 'standard input' };
}

function clientOptions(flags: ProbeFlags, env: Record<string, string | undefined>) {
  const baseUrl = flags.url ?? env.SVC_PROBE_URL;
  if (!baseUrl) throw new InputError('probe send needs --url (or SVC_PROBE_URL): the base URL of svc');
  if (!URL.canParse(baseUrl) || !/^https?:$/.test(new URL(baseUrl).protocol)) throw new InputError(`--url must be an http(s) URL, got ${JSON.stringify(baseUrl)}`);
  const key = env.SVC_PROBE_KEY || undefined;
  const token = env.SVC_PROBE_TOKEN || undefined;
  // Credentials come from the environment only, so they stay out of shell history and process lists.
  if (!key === !token) throw new InputError('set exactly one of SVC_PROBE_KEY (a signed API key) and SVC_PROBE_TOKEN (a lead token)');
  let maxBulkScans: number | undefined;
  if (flags['batch-size'] !== undefined) {
    maxBulkScans = Number(flags['batch-size']);
    if (!/^\d+$/.test(flags['batch-size']) || maxBulkScans < 1 || maxBulkScans > 1000) throw new InputError('--batch-size must be a whole number from 1 to 1000');
  }
  const onRetry = ({ attempt, delay, error }: RetryInfo) =>
    console.error(`svc: ${error.error}${error.status ? ` (${error.status})` : ''}; retry ${attempt} in ${(delay / 1000).toFixed(1)} s`);
  const onBatchSize = ({ size, tier }: BatchSizeChange) =>
    console.error(`svc: ${tier ? `the ${tier} tier of these credentials` : 'svc'} takes ${size} scans a minute: sending ${size} per request (--batch-size N sends fewer)`);
  return { baseUrl, maxBulkScans, onRetry, onBatchSize, ...(key ? { key } : { token: token! }) };
}

/** The credentials of a higher rate tier than `tier`, for the advice after a rate limit. */
const HIGHER_TIER: Record<string, string> = {
  anonymous: "a verified lead's token (the operator verifies the lead: svc leads verify ID) or a signed API key (SVC_PROBE_KEY, from svc keys create --scopes probe:scan)",
  authed: 'a signed API key (SVC_PROBE_KEY, from svc keys create --scopes probe:scan), whose agent tier takes the most scans a minute',
};

/** What to do about a refusal that ended `probe send`: one sentence, or null when the error says it all. */
function refusalAdvice(error: ProbeError): string | null {
  const { tier, limit, retryAfter } = error.body as { tier?: string; limit?: number; retryAfter?: number };
  if (error.status === 429) {
    const higher = tier ? HIGHER_TIER[tier] : undefined;
    return (
      `${tier ? `the ${tier} tier allows ${limit} scans a minute` : 'svc is rate limiting these credentials'}` +
      `${retryAfter ? ` and asks to wait ${retryAfter} s (Retry-After)` : ''}: send the scans not stored again after that` +
      (higher ? `, or with credentials of a higher tier: ${higher}` : tier === 'agent' ? ', or ask the operator to raise SVC_RATE_AGENT' : '')
    );
  }
  if (error.error === 'batch_exceeds_limit') return `send at most ${limit} scans per request: --batch-size ${limit}`;
  if (error.error === 'invalid_token') return 'SVC_PROBE_TOKEN is not a current lead token: sign up again, or ask the operator for a new one (svc leads rotate ID)';
  if (error.error === 'invalid_api_key' || error.error === 'insufficient_scope') return 'SVC_PROBE_KEY must be an active key with the probe:scan scope (svc keys create --scopes probe:scan; svc keys list shows them)';
  return null;
}

/** Runs `svc probe <sub> ...`; resolves with the process exit code. */
export async function probeCommand(sub: string | undefined, rest: string[], flags: ProbeFlags, env: Record<string, string | undefined>): Promise<number> {
  let result: ProbeResult;
  let total = 0;
  try {
    if (sub !== 'send') throw new InputError(`unknown probe command ${JSON.stringify(sub ?? '')}; expected: probe send`);
    const options = clientOptions(flags, env);
    const { text, source } = readInput(rest);
    const scans = parseScans(text, flags.bulk ?? false, source);
    total = scans.length;
    const client = createProbeClient(options);
    if (flags.bulk) {
      result = await client.sendBulk(scans);
    } else {
      await client.send(scans[0]!);
      result = { inserted: 1, skipped: 0, errors: [] };
    }
  } catch (error) {
    if (error instanceof InputError) {
      console.error(`svc: ${error.message}`);
      return PROBE_EXIT.usage;
    }
    if (!(error instanceof ProbeError)) throw error;
    // What earlier bulk requests stored is still the result of this run, and which scans were not
    // stored: scripts need both.
    if (error.result) console.log(JSON.stringify({ ...error.result, unsent: error.unsent }));
    console.error(`svc: probe send failed: ${error.message}`);
    const advice = refusalAdvice(error);
    if (advice) console.error(`svc: ${advice}`);
    if (error.unsent?.length) {
      const unanswered = error.status === 0 || error.status >= 500;
      console.error(
        `svc: ${error.unsent.length} of ${total} scans were not stored (the indexes in "unsent", from ${error.unsent[0]}): ` +
          (unanswered ? 'the last request may have stored some of them; sent again, a scan is stored once only if it carries scannedAt' : 'svc stored none of them; send them again'),
      );
    }
    return PROBE_EXIT.failed;
  }
  console.log(JSON.stringify(result));
  return result.errors.length ? PROBE_EXIT.rejected : PROBE_EXIT.ok;
}
