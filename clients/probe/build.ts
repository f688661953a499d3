// Build @svc/probe: dist/index.js (minified ESM for every runtime) and dist/index.d.ts.
// `bun build.ts` in this folder; the size test bundles through buildProbeClient() the same way.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const HERE = import.meta.dir;

/** The published bundle: minified ESM with nothing runtime-specific in it. */
export async function buildProbeClient(): Promise<string> {
  const result = await Bun.build({ entrypoints: [path.join(HERE, 'src/index.ts')], format: 'esm', target: 'browser', minify: true });
  if (!result.success || !result.outputs[0]) throw new AggregateError(result.logs, 'probe client build failed');
  return result.outputs[0].text();
}

if (import.meta.main) {
  const dist = path.join(HERE, 'dist');
  mkdirSync(dist, { recursive: true });
  writeFileSync(path.join(dist, 'index.js'), await buildProbeClient());
  const tsc = spawnSync('tsc', ['-p', HERE], { stdio: 'inherit', cwd: HERE });
  if (tsc.status !== 0) process.exit(tsc.status ?? 1);
  console.log(`built ${dist}/index.js and index.d.ts`);
}
