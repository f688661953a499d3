import { readFileSync } from 'node:fs';
import path from 'node:path';
import packageJson from '../../package.json' with { type: 'json' };
import { ASSET_ROOT } from './paths.ts';
import type { Engine } from '../storage/index.ts';

// Replaced by `npm run build` (scripts/build.ts, `bun build --define`); undefined when running from source.
declare const SVC_BUILD_COMMIT: string | undefined;
declare const SVC_BUILD_DATE: string | undefined;

export interface BuildInfo {
  version: string;
  /** Git commit the binary was built from; from source, the checkout's HEAD (or "unknown"). */
  commit: string;
  /** ISO-8601 time of `npm run build`; null when running from source. */
  buildDate: string | null;
  /** Which engine holds the state: `sqlite` (the embedded default) or `postgres`. */
  engine: Engine;
  /** How many migrations this build carries for that engine: the schema version it creates and understands. */
  schemaVersion: number;
}

/** The checkout's HEAD when running from source, read from .git (no process spawned), else "unknown". */
function sourceCommit(): string {
  try {
    let gitDir = path.join(ASSET_ROOT, '.git');
    // In a linked worktree .git is a file: "gitdir: <the worktree's git directory>".
    const pointer = /^gitdir: (.+)$/m.exec(tryRead(gitDir) ?? '');
    if (pointer) gitDir = path.resolve(ASSET_ROOT, pointer[1]!.trim());
    const head = tryRead(path.join(gitDir, 'HEAD'))?.trim() ?? '';
    const commonDir = path.resolve(gitDir, tryRead(path.join(gitDir, 'commondir'))?.trim() ?? '.');
    const commit = head.startsWith('ref: ') ? resolveRef(head.slice(5), [gitDir, commonDir]) : head;
    return commit && /^[0-9a-f]{40}$/.test(commit) ? commit : 'unknown';
  } catch {
    return 'unknown';
  }
}

function tryRead(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

function resolveRef(ref: string, gitDirs: string[]): string | null {
  for (const dir of gitDirs) {
    const loose = tryRead(path.join(dir, ref))?.trim();
    if (loose) return loose;
    const packed = tryRead(path.join(dir, 'packed-refs'))
      ?.split('\n')
      .find((line) => line.endsWith(` ${ref}`));
    if (packed) return packed.split(' ')[0]!;
  }
  return null;
}

/** Where each engine's migrations are (embedded in the binary). */
const MIGRATION_FOLDERS: Record<Engine, string> = { sqlite: 'drizzle', postgres: 'drizzle-pg' };

/** Number of migrations this build carries for `engine` (drizzle/ or drizzle-pg/). */
export function bundledSchemaVersion(engine: Engine = 'sqlite'): number {
  const journal = JSON.parse(readFileSync(path.join(ASSET_ROOT, MIGRATION_FOLDERS[engine], 'meta', '_journal.json'), 'utf8')) as { entries: unknown[] };
  return journal.entries.length;
}

const cached = new Map<Engine, BuildInfo>();

/** The running build, with `engine` and the schema version this build carries for it. */
export function buildInfo(engine: Engine = 'sqlite'): BuildInfo {
  let info = cached.get(engine);
  if (info === undefined) {
    info = {
      version: packageJson.version,
      commit: typeof SVC_BUILD_COMMIT === 'string' ? SVC_BUILD_COMMIT : sourceCommit(),
      buildDate: typeof SVC_BUILD_DATE === 'string' ? SVC_BUILD_DATE : null,
      engine,
      schemaVersion: bundledSchemaVersion(engine),
    };
    cached.set(engine, info);
  }
  return info;
}
