// Shared by the benches that run svc on PostgreSQL (bench/engines.ts, bench/scale.ts): a server to
// use (a throwaway one from the system's binaries, or --database-url), a new database on it per
// configuration, and svc's CLI against a configuration's settings.
import { SQL } from 'bun';
import { startThrowawayPostgres } from '../../scripts/postgres-throwaway.ts';
import { ROOT } from './harness.ts';

/** The PostgreSQL server's admin URL (its user may create databases); a throwaway one is stopped at exit. */
export function postgresServer(databaseUrl: string | undefined): { adminUrl: string; throwaway: boolean } {
  if (databaseUrl) return { adminUrl: databaseUrl, throwaway: false };
  const server = startThrowawayPostgres();
  process.on('exit', () => server.stop());
  return { adminUrl: server.url, throwaway: true };
}

/** A new database on the server, for this run alone. */
export async function newDatabase(adminUrl: string): Promise<string> {
  const name = `svc_bench_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`;
  const admin = new SQL({ url: adminUrl, max: 1 });
  await admin.unsafe(`CREATE DATABASE ${name}`);
  await admin.close();
  return Object.assign(new URL(adminUrl), { pathname: `/${name}` }).href;
}

/** `svc <args>` with these settings; its JSON answer. */
export function svcCli(args: string[], env: Record<string, string>): any {
  const run = Bun.spawnSync([process.execPath, 'src/main.ts', ...args], { cwd: ROOT, env: { ...process.env, ...env } });
  if (run.exitCode !== 0) throw new Error(`svc ${args.join(' ')}: ${run.stderr}`);
  return JSON.parse(run.stdout.toString());
}
