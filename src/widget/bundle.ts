import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { etagOf } from '../lib/http-cache.ts';
import { ASSET_ROOT } from '../lib/paths.ts';

export interface WidgetBundle {
  js: string;
  gzip: Uint8Array<ArrayBuffer>;
  etag: string;
}

const WIDGET_DIR = path.join(ASSET_ROOT, 'widget');

/**
 * Bundle widget/embed.ts into a minified browser IIFE. The sources are handed to Bun.build as
 * in-memory files because the bundler cannot read the compiled binary's embedded file system;
 * that is also why widget sources import each other with explicit `.ts` extensions.
 */
export async function buildWidget(dir = WIDGET_DIR): Promise<WidgetBundle> {
  const files: Record<string, string> = {};
  for (const entry of readdirSync(dir, { recursive: true }) as string[]) {
    const file = path.join(dir, entry);
    if (entry.endsWith('.ts') && statSync(file).isFile()) files[`/widget/${entry}`] = readFileSync(file, 'utf8');
  }
  const result = await Bun.build({
    entrypoints: ['/widget/embed.ts'],
    files,
    target: 'browser',
    format: 'iife',
    minify: true,
  });
  if (!result.success || !result.outputs[0]) {
    throw new AggregateError(result.logs, 'widget build failed: ' + result.logs.map((log) => log.message).join('; '));
  }
  const js = await result.outputs[0].text();
  return { js, gzip: Bun.gzipSync(js, { level: 9 }), etag: etagOf(js) };
}
