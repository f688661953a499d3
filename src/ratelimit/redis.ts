import { RedisClient } from 'bun';
import { backoffMs } from '../lib/backoff.ts';
import { passwordScrubber, urlShown } from '../lib/url-credentials.ts';
import { bucketDecision, WINDOW_MS } from './buckets.ts';
import { handshakeRefusal } from './redis-handshake.ts';
import type { SharedBuckets, Tier, TierDecision } from './tiers.ts';

/**
 * One take, atomic in Redis: the client's bucket (KEYS[1]) and, for the anonymous tier, the tier's
 * ceiling (KEYS[2]) refilled to Redis's own clock (TIME, so the instances' clocks do not matter),
 * then ARGV[2] tokens taken from both or from neither. ARGV[1] and ARGV[3] are their capacities
 * (tokens a minute, refilled continuously). A bucket is a hash: `t`, its tokens in 1/60000ths (a
 * refill of `capacity` a minute is `capacity` of them a millisecond, so every figure is a whole
 * number), and `at`, the server time in ms it was last taken from. A missing bucket is a full one,
 * so each bucket expires when it would be full again (PEXPIRE): memory holds only the clients
 * limited within the last minute. Refusals write nothing. Answers {taken 0|1, refused by the
 * ceiling 0|1, tokens left in the bucket that decided, in 1/60000ths}.
 */
export const TAKE_SCRIPT = `
local WINDOW = ${WINDOW_MS}
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local need = tonumber(ARGV[2]) * WINDOW

local function level(key, capacity)
  local state = redis.call('HMGET', key, 't', 'at')
  local tokens, at = tonumber(state[1]), tonumber(state[2])
  if tokens == nil or at == nil then return capacity * WINDOW end
  return math.min(capacity * WINDOW, tokens + math.max(0, now - at) * capacity)
end

local function spend(key, capacity, tokens)
  local left = tokens - need
  redis.call('HSET', key, 't', string.format('%d', left), 'at', string.format('%d', now))
  redis.call('PEXPIRE', key, string.format('%d', math.max(1, math.ceil((capacity * WINDOW - left) / capacity))))
  return left
end

local capacity = tonumber(ARGV[1])
local own = level(KEYS[1], capacity)
if own < need then return {0, 0, own} end
if #KEYS > 1 then
  local ceiling = tonumber(ARGV[3])
  local overall = level(KEYS[2], ceiling)
  if overall < need then return {0, 1, overall} end
  spend(KEYS[2], ceiling, overall)
end
return {1, 0, spend(KEYS[1], capacity, own)}
`;

/** The script's SHA-1, as EVALSHA names it (SCRIPT LOAD answers the same). */
export const TAKE_SCRIPT_SHA = new Bun.CryptoHasher('sha1').update(TAKE_SCRIPT).digest('hex');

/** Every key svc writes starts with this. */
export const KEY_PREFIX = 'svc:rl:';
const CEILING_KEY = `${KEY_PREFIX}anonymous-ceiling`;
/** The bucket a reconnection takes nothing from, to prove Redis runs the script and takes writes (it expires at once). */
const PROBE_KEY = `${KEY_PREFIX}probe`;

/**
 * A client's bucket: its tier, then the SHA-256 of its identity (an address key, a key id, a lead
 * id), so whatever a client sends, the key has one shape and a bounded length.
 */
export const bucketKey = (tier: Tier, identity: string) => `${KEY_PREFIX}${tier}:${new Bun.CryptoHasher('sha256').update(identity).digest('hex')}`;

/** How long a connection attempt (connect, loading the script, a probe take) may take. */
const CONNECT_TIMEOUT_MS = 1000;
/** With takes outstanding, no answer for this long means Redis hangs: the connection is given up. */
const STALL_MS = 1000;
/** Reconnection attempts wait 100 ms, 200 ms, ... up to 2 s between them (with jitter). */
const RECONNECT_BASE_MS = 100;
const RECONNECT_MAX_MS = 2000;


type Log = (level: 'info' | 'error', msg: string, fields: Record<string, unknown>) => void;

/** One connection while it is in use, and whether it still answers. */
interface Link {
  client: RedisClient;
  /** Commands sent and not yet answered. */
  outstanding: number;
  /** Since when nothing was answered while commands were outstanding (performance.now()). */
  quietSince: number;
  /** Set once a take ran out of time: gives the connection up if Redis stays silent for STALL_MS. */
  stallWatch: Timer | null;
}

/** A server error reply naming a script Redis does not hold (after a restart or SCRIPT FLUSH). */
const isNoScript = (error: unknown) => String((error as Error)?.message).startsWith('NOSCRIPT');

/** Bun's client ending a connection without a reason of its own (Redis closed it, or refused its handshake). */
const isConnectionClosed = (error: unknown) => (error as { code?: string })?.code === 'ERR_REDIS_CONNECTION_CLOSED';

/** Rejects when `promise` has not settled after `ms` (for connection attempts, off the request path). */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: Timer | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/**
 * The rate-limit buckets every instance shares, in the Redis at `url` (Bun's client). A take waits
 * for Redis at most `takeTimeoutMs`; past it, or while Redis is unreachable, it answers null and
 * the limiter falls back to this instance's own buckets (limits stay per instance, never off).
 * Losing Redis (a closed connection, an error reply, no answer for STALL_MS) is logged once; svc
 * then reconnects with backoff, sends nothing meanwhile, and logs once when Redis is back. Neither
 * line, nor any error, carries the URL's password.
 */
export function createRedisBuckets({ url, takeTimeoutMs }: { url: string; takeTimeoutMs: number }, log: Log) {
  const shown = urlShown(url);
  /** An error's message with the password cut out, should a message ever carry it. */
  const scrub = passwordScrubber(url);

  /** The connection takes go to; null while Redis is unreachable (takes then fall back at once). */
  let link: Link | null = null;
  let fallbacks = 0;
  /** Whether the current outage has been logged (so it is logged once, and its end too). */
  let outageLogged = false;
  let attempt = 0;
  let reconnectTimer: Timer | null = null;
  let closed = false;

  /** Logs the start of an outage, once, and tries again later. */
  function unreachable(reason: string): void {
    if (!outageLogged) {
      outageLogged = true;
      log('error', 'rate limits: Redis is unreachable; each instance limits with its own buckets until it is back', { redis: shown, reason });
    }
    reconnectLater();
  }

  /** The connection in use failed: takes fall back from now on. */
  function lost(from: Link, reason: string): void {
    if (link !== from) return;
    link = null;
    if (from.stallWatch !== null) clearTimeout(from.stallWatch);
    from.client.close();
    unreachable(reason);
  }

  /** After a take ran out of time: the connection is given up once Redis has answered nothing for STALL_MS with takes outstanding. */
  function watchStall(used: Link): void {
    if (used.stallWatch !== null || link !== used) return;
    used.stallWatch = setTimeout(() => {
      used.stallWatch = null;
      if (used.outstanding === 0) return;
      if (performance.now() - used.quietSince >= STALL_MS) lost(used, `no answer within ${STALL_MS} ms`);
      else watchStall(used);
    }, Math.max(1, STALL_MS - (performance.now() - used.quietSince)));
  }

  function reconnectLater(): void {
    if (closed || reconnectTimer !== null) return;
    attempt++;
    reconnectTimer = setTimeout(() => {
      reconnectTimer = null;
      void connect();
    }, backoffMs(attempt, RECONNECT_BASE_MS, RECONNECT_MAX_MS));
  }

  /** One connection attempt: connect, load the script, take nothing from a probe bucket (Redis runs the script and takes writes). */
  async function connect(): Promise<void> {
    const client = new RedisClient(url, { autoReconnect: false, enableOfflineQueue: false, connectionTimeout: CONNECT_TIMEOUT_MS });
    const candidate: Link = { client, outstanding: 0, quietSince: 0, stallWatch: null };
    client.onclose = (error) => lost(candidate, scrub(error));
    try {
      await within(client.connect(), CONNECT_TIMEOUT_MS, 'connect');
      await within(client.send('SCRIPT', ['LOAD', TAKE_SCRIPT]), CONNECT_TIMEOUT_MS, 'SCRIPT LOAD');
      await within(client.send('EVALSHA', [TAKE_SCRIPT_SHA, '1', PROBE_KEY, '1', '0']), CONNECT_TIMEOUT_MS, 'probe take');
    } catch (error) {
      client.close();
      if (closed) return;
      // The client says "Connection closed" for a refused handshake too: the outage's one log line
      // names the refusal (a wrong or missing password, a Redis too old), asked on a plain connection.
      const refused = !outageLogged && isConnectionClosed(error) ? await handshakeRefusal(url, CONNECT_TIMEOUT_MS, scrub) : null;
      if (!closed) unreachable(refused ?? scrub(error));
      return;
    }
    if (closed) {
      client.close();
      return;
    }
    link = candidate;
    attempt = 0;
    if (outageLogged) {
      outageLogged = false;
      log('info', 'rate limits: Redis answers again; limits are shared by every instance', { redis: shown });
    }
  }

  /** EVALSHA, or EVAL (which loads the script again) when Redis no longer holds it. */
  function evaluate(client: RedisClient, args: string[]): Promise<unknown> {
    return client.send('EVALSHA', [TAKE_SCRIPT_SHA, ...args]).catch((error: unknown) => {
      if (isNoScript(error)) return client.send('EVAL', [TAKE_SCRIPT, ...args]);
      throw error;
    });
  }

  function take(tier: Tier, identity: string, capacity: number, count: number, ceiling: number | null): Promise<Omit<TierDecision, 'tier'> | null> {
    const used = link;
    if (used === null) {
      fallbacks++;
      return Promise.resolve(null);
    }
    const args = ceiling === null ? ['1', bucketKey(tier, identity), String(capacity), String(count)] : ['2', bucketKey(tier, identity), CEILING_KEY, String(capacity), String(count), String(ceiling)];
    if (used.outstanding++ === 0) used.quietSince = performance.now();
    return new Promise((resolve) => {
      let settled = false;
      const fallBack = () => {
        if (settled) return;
        settled = true;
        fallbacks++;
        resolve(null);
      };
      // The request path waits at most this long; the answer, should it come later, is dropped.
      const deadline = setTimeout(() => {
        fallBack();
        watchStall(used);
      }, takeTimeoutMs);
      evaluate(used.client, args).then(
        (reply) => {
          used.outstanding--;
          used.quietSince = performance.now();
          clearTimeout(deadline);
          if (settled) return;
          settled = true;
          resolve(decisionOf(reply as [number, number, number], capacity, count, ceiling));
        },
        (error: unknown) => {
          used.outstanding--;
          clearTimeout(deadline);
          fallBack();
          lost(used, scrub(error));
        },
      );
    });
  }

  const ready = connect();

  const buckets: SharedBuckets & { ready: Promise<void>; shown: string; close(): void } = {
    take,
    get up() {
      return link !== null;
    },
    get fallbacks() {
      return fallbacks;
    },
    /** Settles once the first connection attempt has (the server starts after it, so a healthy Redis takes the first requests). */
    ready,
    /** The URL without its credentials. */
    shown,
    close() {
      closed = true;
      if (reconnectTimer !== null) clearTimeout(reconnectTimer);
      reconnectTimer = null;
      const current = link;
      link = null;
      if (current?.stallWatch) clearTimeout(current.stallWatch);
      current?.client.close();
    },
  };
  return buckets;
}

export type RedisBuckets = ReturnType<typeof createRedisBuckets>;

/** The script's answer as the limiter's decision, with the same arithmetic as this process's buckets. */
function decisionOf([taken, byCeiling, tokens]: [number, number, number], capacity: number, count: number, ceiling: number | null): Omit<TierDecision, 'tier'> {
  const decision = bucketDecision(taken === 1, tokens / WINDOW_MS, byCeiling === 1 ? ceiling! : capacity, count);
  return byCeiling === 1 ? { ...decision, refusedBy: 'ceiling' } : decision;
}
