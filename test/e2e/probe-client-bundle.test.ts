import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { buildProbeClient } from '../../clients/probe/build.ts';
import { tempDir } from '../helpers/app.ts';
import { startProbeServer, type ProbeServer } from '../helpers/probe.ts';

// The published bundle of @svc/probe: its size budget, and the bundle itself run by other runtimes
// against a spawned svc. Node always runs (CI has it); SVC_PROBE_RUNTIMES adds more, as commands
// separated by ";" (e.g. "/opt/node18/bin/node --experimental-global-webcrypto;deno run --allow-net --allow-read").
const BUDGET_BYTES = 2048;
const RUNTIMES: string[][] = [['node'], ...(process.env.SVC_PROBE_RUNTIMES ?? '').split(';').filter((s) => s.trim()).map((s) => s.trim().split(/\s+/))];

let bundle: string;
let svc: ProbeServer;
let dir: ReturnType<typeof tempDir>;

beforeAll(async () => {
  [bundle, svc] = await Promise.all([buildProbeClient(), startProbeServer({ SVC_RATE_AGENT: '100000', SVC_RATE_AUTHED: '100000' })]);
  dir = tempDir('svc-probe-bundle-');
  writeFileSync(path.join(dir.dir, 'probe.mjs'), bundle);
});
afterAll(async () => {
  await svc?.stop();
  dir?.remove();
});

describe('the @svc/probe bundle', () => {
  test(`fits the ${BUDGET_BYTES} byte budget, minified and gzipped`, () => {
    const gzipped = Bun.gzipSync(bundle, { level: 9 }).length;
    console.info(`@svc/probe: ${bundle.length} bytes minified, ${gzipped} bytes gzipped (budget ${BUDGET_BYTES})`);
    expect(gzipped).toBeLessThanOrEqual(BUDGET_BYTES);
  });

  test('is plain ESM with nothing runtime-specific: no Node, Bun or Deno APIs, no imports', () => {
    expect(bundle).toMatch(/export\s*\{[^}]*\bcreateProbeClient\b/);
    expect(bundle).toMatch(/export\s*\{[^}]*\bProbeError\b/);
    for (const marker of ['require(', 'import ', 'import(', 'node:', 'Bun.', 'Deno.', 'process.', 'Buffer']) expect(bundle).not.toContain(marker);
  });

  for (const runtime of RUNTIMES) {
    test(`runs in ${runtime.join(' ')}: both auth modes, bulk, typed errors`, async () => {
      const host = `runtime-${RUNTIMES.indexOf(runtime)}.example.com`;
      const [key, token] = await Promise.all([svc.key(), svc.token()]);
      const script = path.join(dir.dir, `run-${RUNTIMES.indexOf(runtime)}.mjs`);
      writeFileSync(
        script,
        `import { createProbeClient, ProbeError } from './probe.mjs';
const scan = (n) => ({ hostname: ${JSON.stringify(host)}, url: 'https://${host}/p/' + n, scannedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(), signals: { title: { value: 'Café 日本 🎉' } } });
const signed = createProbeClient({ baseUrl: ${JSON.stringify(svc.url)}, key: ${JSON.stringify(key)} });
await signed.send(scan(0));
await createProbeClient({ baseUrl: ${JSON.stringify(svc.url)}, token: ${JSON.stringify(token)} }).send(scan(1));
const bulk = await signed.sendBulk([scan(2), { signals: {} }, scan(3)]);
let refused;
try {
  await createProbeClient({ baseUrl: ${JSON.stringify(svc.url)}, key: ${JSON.stringify(key)}, now: () => Date.now() - 600000 }).send(scan(4));
} catch (error) {
  refused = { isProbeError: error instanceof ProbeError, error: error.error, skewAbout600s: Math.abs(error.skew - 600000) < 2000 };
}
console.log(JSON.stringify({ bulk, refused }));
`,
      );
      const proc = Bun.spawn([...runtime, script], { cwd: dir.dir, stdout: 'pipe', stderr: 'pipe' });
      const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
      expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
      expect(JSON.parse(stdout)).toEqual({
        bulk: { inserted: 2, skipped: 0, errors: [{ index: 1, error: 'missing_field', detail: 'hostname is required' }] },
        refused: { isProbeError: true, error: 'timestamp_out_of_window', skewAbout600s: true },
      });
      const stored = await svc.scans(host);
      expect(stored).toHaveLength(4);
      expect(stored.every((s) => s.signals.title.value === 'Café 日本 🎉')).toBe(true);
    }, 20_000);
  }
});
