import { mkdirSync, statSync } from 'node:fs';
import path from 'node:path';

/**
 * Root of the files shipped with svc (drizzle/, widget/). In the compiled binary they are
 * embedded assets under the virtual `/$bunfs/root`; in development they sit at the repo root.
 */
export const ASSET_ROOT = Bun.isStandaloneExecutable ? import.meta.dir : path.resolve(import.meta.dir, '../..');

/** `mkdir -p` of the data directory, failing with one sentence that names it and says why. */
export function ensureDataDirectory(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true });
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    const why = code === 'EEXIST' || code === 'ENOTDIR' ? 'a file is in the way' : code === 'EACCES' || code === 'EPERM' ? 'permission denied' : code === 'EROFS' ? 'the file system is read-only' : message;
    throw new Error(`cannot create the data directory ${dir}: ${why}`);
  }
}

/** Size of a file, 0 when it does not exist (the WAL between checkpoints, an in-memory database). */
export function fileBytes(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}
