/**
 * A throwaway PostgreSQL server for tests: a new cluster from the system's own binaries (`initdb`,
 * `pg_ctl`; no Docker) in a temporary directory, listening on 127.0.0.1 only, on a free port, with its
 * unix socket inside that directory, holding one database and one user with a password. `stop()`
 * stops it and removes the directory; so do Ctrl-C and a crash of the process that started it, and a
 * server left by a `kill -9` is stopped and removed by the next start.
 *
 * `initdb` refuses to run as root: as root, every PostgreSQL binary runs as the `postgres` system user
 * (`runuser -u postgres`) in a directory it owns.
 *
 *   bun scripts/postgres-throwaway.ts   starts one, prints its URL, and removes it on Ctrl-C
 *                                       (to run single files: SVC_TEST_DATABASE_URL=<url> npx bun test test/postgres/...)
 */
import { spawnSync } from 'node:child_process';
import { appendFileSync, chownSync, existsSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** The oldest PostgreSQL svc supports (issue 30). */
const MIN_MAJOR_VERSION = 15;
const DIR_PREFIX = 'svc-pg-';
const DATABASE = 'svc_test';
const USER = 'svc_test';

export interface ThrowawayPostgres {
  /** `postgres://svc_test:<password>@127.0.0.1:<port>/svc_test`; the user may create databases. */
  url: string;
  /** The server's directory (data, socket, log). */
  dir: string;
  /** Stops the server and removes its directory; synchronous, so exit and signal handlers can call it. */
  stop(): void;
}

/**
 * The directory of the binaries: that of `initdb` on PATH (most systems other than Debian; through any
 * symlink, to where psql sits too), else Debian's /usr/lib/postgresql/<version>/bin, newest first.
 */
function findBinaries(): string {
  const onPath = Bun.which('initdb');
  if (onPath) return path.dirname(realpathSync(onPath));
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((name) => /^\d+$/.test(name) && existsSync(path.join(root, name, 'bin', 'initdb'))) : [];
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0];
  if (!newest) throw new Error('PostgreSQL is not installed: no initdb on PATH nor in /usr/lib/postgresql/<version>/bin (Debian and Ubuntu: apt-get install postgresql)');
  return path.join(root, newest, 'bin');
}

const isRoot = () => process.getuid?.() === 0;

/** The `postgres` system user's uid and gid, to run the binaries as when this process is root. */
function postgresUser(): { uid: number; gid: number } {
  const id = (flag: string) => spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' });
  const [uid, gid] = [id('-u'), id('-g')];
  if (uid.status !== 0 || gid.status !== 0) throw new Error('running as root, and initdb refuses root: a `postgres` system user is needed to run PostgreSQL as (the postgresql package creates it)');
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/** Runs one PostgreSQL binary (as `postgres` when root); throws with its output when it fails. */
function run(bin: string, tool: string, args: string[]): string {
  const command = isRoot() ? ['runuser', '-u', 'postgres', '--', path.join(bin, tool), ...args] : [path.join(bin, tool), ...args];
  const result = spawnSync(command[0]!, command.slice(1), { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (result.error) throw new Error(`${tool}: ${result.error.message}`);
  if (result.status !== 0) throw new Error(`${tool} ${args.join(' ')} exited ${result.status}: ${(result.stderr || result.stdout).trim()}`);
  return result.stdout;
}

/** A port nobody listens on now: the kernel picks one, and it is given back at once. */
export function freePort(): number {
  const server = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } });
  const { port } = server;
  server.stop(true);
  return port;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Stops a server (fast: its data is thrown away) and removes its directory. */
function remove(bin: string, dir: string): void {
  const data = path.join(dir, 'data');
  if (existsSync(path.join(data, 'postmaster.pid'))) {
    try {
      run(bin, 'pg_ctl', ['stop', '-D', data, '-m', 'immediate', '-w', '-t', '30']);
    } catch {
      // not running after all (a crash left its pid file); the directory goes anyway
    }
  }
  rmSync(dir, { recursive: true, force: true });
}

/** Servers whose starter died without cleaning up (kill -9): its pid is in the directory's name. */
function removeAbandoned(bin: string): void {
  for (const name of readdirSync(tmpdir())) {
    const pid = new RegExp(`^${DIR_PREFIX}(\\d+)-`).exec(name)?.[1];
    if (pid && !alive(Number(pid))) remove(bin, path.join(tmpdir(), name));
  }
}

/** Settings for a server that lives for one test run; everything else is PostgreSQL's default. */
function settings(dir: string, port: number): string {
  return [
    `listen_addresses = '127.0.0.1'`,
    `port = ${port}`,
    `unix_socket_directories = '${dir}'`,
    // Its data is deleted at the end: durability across an OS crash buys nothing and costs every commit a flush.
    'fsync = off',
    'synchronous_commit = off',
    'full_page_writes = off',
    '',
  ].join('\n');
}

/** How many times a start is retried on another port when the one picked was taken in the meantime. */
const PORT_ATTEMPTS = 3;

export function startThrowawayPostgres(): ThrowawayPostgres {
  const bin = findBinaries();
  const version = /\b(\d+)(?:\.\d+)?/.exec(run(bin, 'initdb', ['--version']))?.[1];
  if (Number(version) < MIN_MAJOR_VERSION) throw new Error(`PostgreSQL ${MIN_MAJOR_VERSION} or newer is needed; ${bin} holds version ${version}`);
  const owner = isRoot() ? postgresUser() : null;
  removeAbandoned(bin);

  const dir = mkdtempSync(path.join(tmpdir(), `${DIR_PREFIX}${process.pid}-`));
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    remove(bin, dir);
  };
  try {
    if (owner) chownSync(dir, owner.uid, owner.gid);
    const data = path.join(dir, 'data');
    run(bin, 'initdb', ['-D', data, '--auth-local=trust', '--auth-host=scram-sha-256', '--encoding=UTF8', '--locale=C', '--no-sync', '--no-instructions']);
    let port = 0;
    for (let attempt = 1; ; attempt++) {
      port = freePort();
      // Written by this process (root or not) into a file the server's user already owns and can read.
      appendFileSync(path.join(data, 'postgresql.conf'), settings(dir, port));
      try {
        run(bin, 'pg_ctl', ['start', '-D', data, '-l', path.join(dir, 'server.log'), '-w', '-t', '60']);
        break;
      } catch (error) {
        if (attempt === PORT_ATTEMPTS) throw error;
      }
    }
    const password = Buffer.from(crypto.getRandomValues(new Uint8Array(18))).toString('hex');
    const script = path.join(dir, 'setup.sql');
    writeFileSync(script, `CREATE ROLE ${USER} LOGIN CREATEDB PASSWORD '${password}';\nCREATE DATABASE ${DATABASE} OWNER ${USER};\n`, { mode: 0o644 });
    run(bin, 'psql', ['-h', dir, '-p', String(port), '-d', 'postgres', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-f', script]);
    rmSync(script);
    return { url: `postgres://${USER}:${password}@127.0.0.1:${port}/${DATABASE}`, dir, stop };
  } catch (error) {
    stop();
    throw error;
  }
}

/** Stops the server when this process ends, however it ends (short of kill -9). */
export function stopOnExit(server: ThrowawayPostgres): void {
  process.on('exit', server.stop);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      server.stop();
      process.exit(130);
    });
  }
}

if (import.meta.main) {
  const server = startThrowawayPostgres();
  stopOnExit(server);
  console.log(server.url);
  console.error('PostgreSQL is running; Ctrl-C stops and removes it');
  setInterval(() => {}, 1 << 30);
}
