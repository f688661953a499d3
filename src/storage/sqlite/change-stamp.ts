import type { Database } from 'bun:sqlite';
import { dlopen, FFIType, toArrayBuffer, type Pointer } from 'bun:ffi';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

/** Words (u32, native byte order) of the WAL-index header at the start of `<database>-shm`. */
const HEADER_WORDS = 12;

/** The first region of the WAL index, which SQLite maps itself: `-shm` is at least this long once initialised. */
const MAPPED_BYTES = 32768;

/** The `-shm` file of one connection, kept open until it closes (closeChangeStamps). */
interface ShmFile {
  fd: number;
  /** The first region mapped read-only and shared, or null when it could not be (then each read is a pread). */
  mapping: { address: Pointer; header: Uint32Array } | null;
  closed: boolean;
}

const shmFiles = new WeakMap<Database, ShmFile>();

/**
 * libc's `mmap` and `munmap` through `bun:ffi` (experimental in Bun), used for nothing else: two
 * calls per connection, none per read. Null where they cannot be had (not Linux, no `libc.so.6`,
 * e.g. musl); the stamp then reads the header with a pread, as it always could.
 */
let libc: ReturnType<typeof openLibc> | undefined;
function openLibc() {
  if (process.platform !== 'linux') return null;
  try {
    return dlopen('libc.so.6', {
      mmap: { args: [FFIType.ptr, FFIType.u64, FFIType.i32, FFIType.i32, FFIType.i32, FFIType.i64], returns: FFIType.ptr },
      munmap: { args: [FFIType.ptr, FFIType.u64], returns: FFIType.i32 },
    }).symbols;
  } catch {
    return null;
  }
}

const PROT_READ = 1;
const MAP_SHARED = 1;

/**
 * The start of `-shm` mapped read-only and shared from `fd`, the descriptor the stamp keeps open
 * (never `Bun.mmap`, which opens and closes a descriptor of its own: see walIndexHeader). Null when
 * libc is not at hand, the file is shorter than the mapping (reading past its end would raise
 * SIGBUS), or mmap fails (MAP_FAILED, (void *)-1, comes back as a BigInt).
 */
function mapHeader(fd: number): ShmFile['mapping'] {
  libc ??= openLibc();
  if (libc === null || fstatSync(fd).size < MAPPED_BYTES) return null;
  const address = libc.mmap(null, MAPPED_BYTES, PROT_READ, MAP_SHARED, fd, 0);
  if (typeof address !== 'number' || address <= 0) return null;
  return { address, header: new Uint32Array(toArrayBuffer(address, 0, HEADER_WORDS * 4)) };
}

function shmClosed(): never {
  throw new Error('the change stamp was read after its database was closed');
}

/**
 * A reader of the WAL-index header of an open WAL database, from its `-shm` file, or null when
 * there is none (not in WAL mode, an in-memory database). Every commit by any connection of any
 * process rewrites it (https://sqlite.org/walformat.html, §2.1: the frame count `mxFrame` grows, or
 * the WAL restarts with new salts), and a reader sees a commit only once this first copy of the
 * header is complete (the second copy is written first), so comparing it detects every change.
 *
 * The header is read from a shared read-only mapping of the file (plain memory reads, no system
 * call per request); where it cannot be mapped, or `mapped` is false (tests), with a 48-byte pread.
 * The returned array is the live mapping or the pread's buffer: compare it, don't keep it.
 *
 * The descriptor stays open until the connection closes: SQLite holds a POSIX lock on this file
 * while the connection is open, and POSIX drops every lock a process holds on a file when any of
 * its descriptors for that file closes. Closing one early (as `Bun.mmap` does after mapping) would
 * let another process (the CLI) reinitialise the WAL index under the server, truncating the file
 * under the mapping.
 */
function walIndexHeader(sqlite: Database, mapped: boolean): (() => Uint32Array) | null {
  const journal = sqlite.query<{ journal_mode: string }, []>('PRAGMA journal_mode').get();
  if (journal?.journal_mode !== 'wal') return null;
  sqlite.query('SELECT 1 FROM sqlite_master LIMIT 1').get(); // the first read creates the -shm file
  let shm = shmFiles.get(sqlite);
  if (shm === undefined) {
    let fd: number;
    try {
      fd = openSync(`${sqlite.filename}-shm`, 'r');
    } catch {
      return null;
    }
    shm = { fd, mapping: null, closed: false };
    shmFiles.set(sqlite, shm);
  }
  if (mapped) shm.mapping ??= mapHeader(shm.fd);
  const file = shm;
  if (mapped && file.mapping !== null) {
    const live = file.mapping.header;
    return () => (file.closed ? shmClosed() : live);
  }
  const header = new Uint32Array(HEADER_WORDS);
  const bytes = new Uint8Array(header.buffer);
  return () => {
    if (file.closed) shmClosed();
    readSync(file.fd, bytes, 0, bytes.byteLength, 0);
    return header;
  };
}

/**
 * After `sqlite.close()`: unmaps the `-shm` header its change stamps read, then closes the
 * descriptor (see walIndexHeader). A stamp read after this throws instead of touching either.
 */
export function closeChangeStamps(sqlite: Database): void {
  const shm = shmFiles.get(sqlite);
  if (shm === undefined) return;
  shmFiles.delete(sqlite);
  shm.closed = true;
  if (shm.mapping !== null) libc!.munmap(shm.mapping.address, MAPPED_BYTES);
  closeSync(shm.fd);
}

/**
 * A cheap stamp that changes whenever the database may have changed: any commit, by this connection
 * or by another process (e.g. the CLI revoking a key), moves it before the next call returns.
 * Caches keep an entry while the stamp is unchanged and revalidate it otherwise; it can only
 * over-invalidate (a checkpoint restarting the WAL moves it too), never serve stale data.
 *
 * On a WAL database (always, for svc's file) it compares the WAL-index header: 12 words read from
 * a shared mapping of `-shm`, no system call and no SQLite call (a few ns; the pread fallback takes
 * ~1.3 µs, `PRAGMA data_version` ~3.5 µs, since it takes and releases file locks on every call, and
 * ~11 µs under load). Elsewhere it asks SQLite: `total_changes()` for this connection's writes,
 * `data_version` for others'. `options.mapped: false` forces the pread (the fallback, for tests).
 */
export function createChangeStamp(sqlite: Database, options: { mapped?: boolean } = {}): () => number {
  const readHeader = walIndexHeader(sqlite, options.mapped ?? true);
  let generation = 0;
  if (readHeader === null) {
    const query = sqlite.query<{ c: number; v: number }, []>('SELECT total_changes() AS c, (SELECT data_version FROM pragma_data_version) AS v');
    let seen = '';
    return () => {
      const row = query.get()!;
      const now = `${row.c}:${row.v}`;
      if (now !== seen) {
        seen = now;
        generation++;
      }
      return generation;
    };
  }
  const seen = new Uint32Array(HEADER_WORDS);
  return () => {
    const header = readHeader();
    for (let i = 0; i < HEADER_WORDS; i++) {
      if (header[i] !== seen[i]) {
        // A header caught mid-write (another process may write the mapped one while it is read) is
        // remembered as seen; its completion differs from it and moves the stamp again. The words
        // copied may be later than those compared: `seen` still holds words the header had.
        seen.set(header);
        return ++generation;
      }
    }
    return generation;
  };
}
