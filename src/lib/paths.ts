import path from 'node:path';

/**
 * Root of the files shipped with svc (drizzle/, widget/). In the compiled binary they are
 * embedded assets under the virtual `/$bunfs/root`; in development they sit at the repo root.
 */
export const ASSET_ROOT = Bun.isStandaloneExecutable ? import.meta.dir : path.resolve(import.meta.dir, '../..');
