// Several svc instances on one PostgreSQL database (issue 31), as an operator runs them: spawned
// `svc serve` processes sharing the settings, behind a small round-robin proxy that stands in for the
// load balancer (it forwards each request to the next live instance, as nginx's `proxy_next_upstream`
// does when an instance's connection is refused).
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { spawnServer, type SpawnedServer } from './server.ts';

export interface RoundRobinProxy {
  url: string;
  /** Where requests go, in turn. */
  upstreams: SpawnedServer[];
  /** Requests each upstream answered, by its URL. */
  answered: Map<string, number>;
  stop(): void;
}

/**
 * A reverse proxy on a free loopback port. The body is read first, so a request an instance refused
 * to connect for (it is gone) is sent to the next one; an instance that accepted it and then died
 * mid-answer is not retried (the client sees the failure, as through a real load balancer: the
 * request may have been acted on).
 */
export function roundRobinProxy(): RoundRobinProxy {
  const upstreams: SpawnedServer[] = [];
  const answered = new Map<string, number>();
  let next = 0;
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 60,
    async fetch(request) {
      const url = new URL(request.url);
      const body = request.method === 'GET' || request.method === 'HEAD' ? undefined : await request.arrayBuffer();
      for (let tried = 0; tried < upstreams.length; tried++) {
        const upstream = upstreams[next++ % upstreams.length]!;
        if (upstream.proc.exitCode !== null || upstream.proc.signalCode !== null) continue;
        let answer: Response;
        try {
          answer = await fetch(`${upstream.url}${url.pathname}${url.search}`, { method: request.method, headers: request.headers, body, redirect: 'manual', decompress: false } as RequestInit);
        } catch (error) {
          if ((error as { code?: string }).code === 'ConnectionRefused') continue;
          return new Response('bad gateway', { status: 502 });
        }
        answered.set(upstream.url, (answered.get(upstream.url) ?? 0) + 1);
        return new Response(answer.body, { status: answer.status, headers: answer.headers });
      }
      return new Response('no instance is up', { status: 503 });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, upstreams, answered, stop: () => server.stop(true) };
}

/** `count` instances of `svc serve` with the same settings, each with its own (unused) data directory under `dir`. */
export async function startInstances(count: number, dir: string, env: Record<string, string>): Promise<SpawnedServer[]> {
  const instances: SpawnedServer[] = [];
  for (let n = 1; n <= count; n++) instances.push(await spawnServer({ dataDir: path.join(dir, `instance-${n}`), env }));
  return instances;
}

/** The id an instance printed in its start line. */
export const instanceId = (server: SpawnedServer) => server.started.instance as string;

/**
 * Which of `servers` holds the loopback TCP connection from local port `port` to `serverPort` (a
 * request a fake platform received: `peerOf`), from Linux's /proc: the established socket's inode in
 * /proc/net/tcp (a closed one of an earlier connection from the same port has none), then the process
 * whose file descriptors include it. Null when none does (or without /proc).
 */
export function serverConnectedFrom(servers: SpawnedServer[], port: number, serverPort: number): SpawnedServer | null {
  const hex = (value: number) => `:${value.toString(16).toUpperCase().padStart(4, '0')}`;
  const ESTABLISHED = '01';
  let inode: string | undefined;
  try {
    for (const line of readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
      const [, local, remote, state, , , , , , node] = line.trim().split(/\s+/);
      if (local?.endsWith(hex(port)) && remote?.endsWith(hex(serverPort)) && state === ESTABLISHED && node !== '0') inode = node;
    }
  } catch {
    return null;
  }
  if (inode === undefined) return null;
  const socket = `socket:[${inode}]`;
  for (const server of servers) {
    const fds = `/proc/${server.proc.pid}/fd`;
    try {
      if (readdirSync(fds).some((fd) => { try { return readlinkSync(`${fds}/${fd}`) === socket; } catch { return false; } })) return server;
    } catch {
      // The process is gone.
    }
  }
  return null;
}
