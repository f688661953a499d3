// npm run build: the single binary dist/svc (or the path given: `bun scripts/build.ts OUTFILE`), with
// the git commit and the build time embedded (`--define`, read by src/lib/build-info.ts) so
// `svc version`, /healthz and the start line name them.
import path from 'node:path';

const root = path.resolve(import.meta.dir, '..');
const outfile = path.resolve(root, process.argv[2] ?? 'dist/svc');

function git(...args: string[]): string | null {
  try {
    const result = Bun.spawnSync(['git', ...args], { cwd: root, stdout: 'pipe', stderr: 'ignore' });
    return result.exitCode === 0 ? result.stdout.toString().trim() : null;
  } catch {
    return null; // git is not installed
  }
}

// SVC_BUILD_COMMIT names the commit where git is not available (a Docker build without .git).
const head = git('rev-parse', 'HEAD');
// Uncommitted changes to tracked files are part of the binary: say so.
const dirty = head !== null && git('status', '--porcelain', '--untracked-files=no') !== '';
const commit = process.env.SVC_BUILD_COMMIT || (head === null ? 'unknown' : `${head}${dirty ? '-dirty' : ''}`);
// SOURCE_DATE_EPOCH (reproducible builds) wins over the clock.
const epoch = process.env.SOURCE_DATE_EPOCH;
const buildDate = new Date(epoch && /^\d+$/.test(epoch) ? Number(epoch) * 1000 : Date.now()).toISOString();

const build = Bun.spawnSync(
  [
    // Not --minify-identifiers: renamed identifiers made Elysia skip decoding query numbers, so the
    // binary took limit=9999 where `bun src/main.ts` answers 400 (test/e2e/binary.test.ts).
    // Each Worker (the roller's, the dashboard's) is an entry point of its own: the binary starts it from its embedded copy.
    process.execPath, 'build', '--compile', '--minify-syntax', '--minify-whitespace', 'src/main.ts', 'src/storage/sqlite/scan-roller-worker.ts', 'src/storage/sqlite/scan-dashboard-worker.ts', 'src/storage/postgres/scan-roller-worker.ts',
    '--asset', './drizzle', '--asset', './drizzle-pg', '--asset', './widget',
    '--define', `SVC_BUILD_COMMIT=${JSON.stringify(commit)}`,
    '--define', `SVC_BUILD_DATE=${JSON.stringify(buildDate)}`,
    '--outfile', outfile,
  ],
  { cwd: root, stdout: 'inherit', stderr: 'inherit' },
);
if (build.exitCode !== 0) process.exit(build.exitCode ?? 1);
const shown = path.relative(root, outfile);
console.log(JSON.stringify({ binary: shown.startsWith('..') ? outfile : shown, commit, buildDate }));
