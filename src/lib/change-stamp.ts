import type { Database } from 'bun:sqlite';
import { dlopen, FFIType, suffix, toArrayBuffer, type Pointer } from 'bun:ffi';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

/** Words (u32, native byte order) of the WAL-index header at the start of `<database>-shm`. */
const HEADER_WORDS = 12;

/** An open `-shm` file: its descriptor and, where the C library could map it, its header in memory. */
interface ShmFile {
  fd: number;
  /** The first page, mapped read-only and shared (as SQLite maps it); null where it could not be. */
  mapped: { address: number; header: Uint32Array } | null;
  open: boolean;
}

/** Open `-shm` files, one per connection, closed with it (closeChangeStamps). */
const shmFiles = new WeakMap<Database, ShmFile>();

/**
 * A reader of the WAL-index header of an open WAL database, from its `-shm` file, or null when there
 * is none (not in WAL mode, an in-memory database). Every commit by any connection of any process
 * rewrites it (https://sqlite.org/walformat.html, §2.1: the frame count `mxFrame` grows, or the WAL
 * restarts with new salts), and a reader sees a commit only once this first copy of the header is
 * complete (the second copy is written first), so comparing it detects every change.
 *
 * The header is read where SQLite itself reads it: the file's first page mapped shared into memory
 * (no system call per read), or else with one pread per call. The descriptor stays open until the
 * connection closes: SQLite holds a POSIX lock on this file while the connection is open, and POSIX
 * drops every lock a process holds on a file when any of its descriptors for that file closes.
 * Closing one early (as `Bun.mmap` does after mapping) would let another process (the CLI) believe
 * no one has the database open and reinitialise the WAL index under the server, shrinking the file
 * under the mapping (SIGBUS). While the lock is held, no process shrinks the file; the mapping is
 * undone with the descriptor, after the connection closes, and a read after that throws.
 */
function walIndexHeader(sqlite: Database): (() => Uint32Array) | null {
  const journal = sqlite.query<{ journal_mode: string }, []>('PRAGMA journal_mode').get();
  if (journal?.journal_mode !== 'wal') return null;
  sqlite.query('SELECT 1 FROM sqlite_master LIMIT 1').get(); // the first read creates the -shm file (SQLite sizes it to 32 KiB)
  let shm = shmFiles.get(sqlite);
  if (shm === undefined) {
    let fd: number;
    try {
      fd = openSync(`${sqlite.filename}-shm`, 'r');
    } catch {
      return null;
    }
    shm = { fd, mapped: mapFirstPage(fd), open: true };
    shmFiles.set(sqlite, shm);
  }
  const file = shm;
  const closed = () => new Error('the change stamp was read after its database closed');
  if (file.mapped !== null) {
    const header = file.mapped.header;
    return () => {
      if (!file.open) throw closed();
      return header;
    };
  }
  const header = new Uint32Array(HEADER_WORDS);
  const bytes = new Uint8Array(header.buffer);
  return () => {
    if (!file.open) throw closed();
    readSync(file.fd, bytes, 0, bytes.byteLength, 0);
    return header;
  };
}

/** Bytes mapped: one page, which holds the 48-byte header. */
const PAGE = 4096;
const PROT_READ = 1;
const MAP_SHARED = 1;

/** The C library's mmap and munmap, or null where none can be opened (then the header is pread). */
let libc: { mmap: (fd: number) => number | null; munmap: (address: number) => void } | null | undefined;

function memoryMapping(): NonNullable<typeof libc> | null {
  if (libc !== undefined) return libc;
  libc = null;
  for (const name of ['libc.so.6', `libc.${suffix}`]) {
    try {
      const { symbols } = dlopen(name, {
        mmap: { args: [FFIType.ptr, FFIType.u64, FFIType.i32, FFIType.i32, FFIType.i32, FFIType.i64], returns: FFIType.ptr },
        munmap: { args: [FFIType.ptr, FFIType.u64], returns: FFIType.i32 },
      });
      libc = {
        // MAP_FAILED is (void *)-1: no user-space address is that high.
        mmap: (fd) => {
          const address = Number(symbols.mmap(null, PAGE, PROT_READ, MAP_SHARED, fd, 0));
          return address > 0 && address < 2 ** 48 ? address : null;
        },
        munmap: (address) => void symbols.munmap(address as Pointer, PAGE),
      };
      break;
    } catch {
      // not this name on this system
    }
  }
  return libc;
}

/** The first page of the open `-shm` file `fd` mapped read-only and shared, or null (no C library, a file shorter than a page). */
function mapFirstPage(fd: number): ShmFile['mapped'] {
  const mapping = memoryMapping();
  if (!mapping || fstatSync(fd).size < PAGE) return null;
  const address = mapping.mmap(fd);
  if (address === null) return null;
  return { address, header: new Uint32Array(toArrayBuffer(address as Pointer, 0, HEADER_WORDS * 4)) };
}

/** After `sqlite.close()`: unmaps and closes the `-shm` file its change stamps read (see walIndexHeader). */
export function closeChangeStamps(sqlite: Database): void {
  const shm = shmFiles.get(sqlite);
  if (shm === undefined) return;
  shmFiles.delete(sqlite);
  shm.open = false;
  if (shm.mapped !== null) memoryMapping()!.munmap(shm.mapped.address);
  closeSync(shm.fd);
}

/**
 * A cheap stamp that changes whenever the database may have changed: any commit, by this connection
 * or by another process (e.g. the CLI revoking a key), moves it before the next call returns.
 * Caches keep an entry while the stamp is unchanged and revalidate it otherwise; it can only
 * over-invalidate (a checkpoint restarting the WAL moves it too), never serve stale data.
 *
 * On a WAL database (always, for svc's file) it compares the WAL-index header: 48 bytes read from
 * memory, no system call and no SQLite call (measured: ~0.01 µs, against ~0.7–1.3 µs for a pread of
 * them, ~3.5 µs for `PRAGMA data_version`, which takes and releases file locks on every call, and
 * ~11 µs for it under load). Elsewhere it asks SQLite: `total_changes()` for this connection's
 * writes, `data_version` for others'.
 */
export function createChangeStamp(sqlite: Database): () => number {
  const readHeader = walIndexHeader(sqlite);
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
        // A header caught mid-write is remembered as seen; its completion differs from it and moves the stamp again.
        seen.set(header);
        return ++generation;
      }
    }
    return generation;
  };
}
