// The long fuzz pass (issue 11): `npx bun bench/fuzz.ts [--seed N] [--requests N] [--concurrency N]`.
// Mutated requests across every route of a spawned `svc serve` with raised rate limits and one with
// the shipped limits; prints counts by status, the worst latency, RSS start/peak/end, and every 5xx.
import { formatReport, rssSettled, runFuzz, startFuzzTarget } from '../test/helpers/fuzz.ts';

const args = process.argv.slice(2);
const flag = (name: string, fallback: number) => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? Number(args[at + 1]) : fallback;
};
const seed = flag('seed', Math.floor(Math.random() * 2 ** 31));
const requests = flag('requests', 50_000);
const concurrency = flag('concurrency', 32);

console.log(`fuzzing with seed ${seed}: ${requests} requests, ${concurrency} at a time`);
const targets = [await startFuzzTarget('raised'), await startFuzzTarget('default')];
try {
  let lastPrint = Date.now();
  const report = await runFuzz({
    seed,
    requests,
    targets,
    concurrency,
    onProgress: (done) => {
      if (Date.now() - lastPrint < 5000) return;
      lastPrint = Date.now();
      console.log(`  ${done} / ${requests}`);
    },
  });
  console.log(formatReport(report));
  for (const line of report.serverErrors.slice(0, 50)) console.log(`  5xx ${line}`);
  for (const line of report.healthFailures.slice(0, 20)) console.log(`  /healthz ${line}`);
  const ok = report.serverErrors.length === 0 && report.healthFailures.length === 0 && report.rss.every(rssSettled);
  console.log(ok ? 'no 5xx, /healthz answered throughout, RSS settled near its start' : `FAILED; reproduce with: npx bun bench/fuzz.ts --seed ${seed} --requests ${requests}`);
  process.exitCode = ok ? 0 : 1;
} finally {
  for (const target of targets) await target.stop();
}
