import { createHmac } from 'node:crypto';

export const TELEMETRY = '/api/v1/probe/telemetry';

/** A minimal valid telemetry payload, with overrides. */
export const scanPayload = (overrides: Record<string, unknown> = {}) => ({
  hostname: 'shop.example.com',
  signals: { title: { value: 'Shop', length: 4 } },
  ...overrides,
});

/** Mode 2 headers: hex HMAC-SHA256 of `<timestamp>.<raw body>` keyed with the raw key (spec §5). */
export function signedHeaders(rawKey: string, body: string, timestamp: number | string): Record<string, string> {
  // Computed with node:crypto directly, independent of the server's own helper.
  const signature = createHmac('sha256', rawKey).update(`${timestamp}.${body}`, 'utf8').digest('hex');
  return { 'content-type': 'application/json', 'x-probe-key': rawKey, 'x-probe-timestamp': String(timestamp), 'x-probe-signature': signature };
}

/** A signed POST of `body` (sent exactly as given) at `timestamp`. */
export function signedInit(rawKey: string, body: string, timestamp: number | string, extra: Record<string, string> = {}): RequestInit {
  return { method: 'POST', body, headers: { ...signedHeaders(rawKey, body, timestamp), ...extra } };
}

/** A mode 1 POST with `X-Probe-Token`. */
export function tokenInit(token: string, payload: unknown, extra: Record<string, string> = {}): RequestInit {
  return { method: 'POST', body: JSON.stringify(payload), headers: { 'content-type': 'application/json', 'x-probe-token': token, ...extra } };
}
