import { describe, expect, test } from 'bun:test';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from './helpers/cli.ts';

// The deployment files are run by Docker, which the tests do not have: these rules keep
// them honest by reading them as those tools would (Compose's YAML, nginx's upstream).

type Service = {
  image?: string;
  build?: string;
  profiles?: string[];
  hostname?: string;
  env_file?: string | string[];
  environment?: Record<string, string>;
  ports?: string[];
  volumes?: string[];
  command?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
};
type Compose = { services: Record<string, Service>; volumes?: Record<string, unknown> };

const read = (file: string) => readFileSync(path.join(REPO_ROOT, file), 'utf8');
const compose = (file: string) => Bun.YAML.parse(read(file)) as Compose;
const single = compose('compose.yaml');
const scale = compose('compose.scale.yaml');

/** The svc instances of a Compose file: the services that run the svc image. */
const svcInstances = (file: Compose) => Object.entries(file.services).filter(([, service]) => service.image === 'svc:local');
const [, proxy] = Object.entries(scale.services).find(([, service]) => service.image?.startsWith('nginx:')) ?? [];
const healthcheck = (service: Service | undefined) => service?.healthcheck?.test.join(' ') ?? '';
/** `${NAME:?message}`: Compose refuses to start without NAME. */
const required = (value: string | undefined, name: string) => new RegExp(`^\\$\\{${name}:\\?[^}]+\\}$`).test(value ?? '');

/** The `server host:port` lines of an nginx `upstream` block, and the upstream's name. */
function nginxUpstream(config: string): { name: string; servers: string[] } {
  const block = /upstream\s+(\S+)\s*\{([^}]*)\}/.exec(config);
  if (!block) return { name: '', servers: [] };
  return { name: block[1]!, servers: [...block[2]!.matchAll(/^\s*server\s+(\S+?)[\s;]/gm)].map((m) => m[1]!) };
}

describe('compose.yaml (one instance)', () => {
  test('the default is one svc on SQLite: no Redis, no PostgreSQL unless its profile is started', () => {
    const started = Object.entries(single.services).filter(([, service]) => !service.profiles).map(([name]) => name);
    expect(started).toEqual(['svc']);
    const svc = single.services.svc!;
    expect(svc.environment?.SVC_DATABASE_URL).toBe('${SVC_DATABASE_URL:-}');
    expect(svc.environment?.SVC_REDIS_URL).toBeUndefined();
    expect(svc.volumes).toEqual(['svc-data:/var/lib/svc/data']);
    expect(single.services.postgres?.profiles).toEqual(['postgres']);
  });

  test('it serves on 127.0.0.1:3000 behind one proxy hop, and refuses to start without its two secrets', () => {
    const svc = single.services.svc!;
    expect(svc.ports).toEqual(['127.0.0.1:3000:3000']);
    expect(svc.environment?.SVC_TRUST_PROXY).toBe('1');
    expect(required(svc.environment?.SVC_BASE_URL, 'SVC_BASE_URL')).toBe(true);
    expect(required(svc.environment?.SVC_ENCRYPTION_KEY, 'SVC_ENCRYPTION_KEY')).toBe(true);
  });
});

describe('compose.scale.yaml (three instances)', () => {
  const instances = svcInstances(scale);

  test('it runs PostgreSQL, Redis, three svc instances and nginx, from official images', () => {
    expect(instances.map(([name]) => name)).toEqual(['svc-1', 'svc-2', 'svc-3']);
    expect(scale.services.postgres?.image).toMatch(/^postgres:\d+$/);
    expect(scale.services.redis?.image).toMatch(/^redis:\d+$/);
    expect(proxy?.image).toMatch(/^nginx:\d+\.\d+$/);
    // Nothing in it waits for a profile: `up -d` starts it all.
    expect(Object.values(scale.services).filter((service) => service.profiles)).toEqual([]);
  });

  test('every instance gets the same settings: the same .env, the same environment, one database and one Redis', () => {
    const [, first] = instances[0]!;
    for (const [name, service] of instances) {
      expect({ name, env_file: service.env_file, environment: service.environment, build: service.build }).toEqual({ name, env_file: '.env', environment: first.environment, build: '.' });
      expect({ name, hostname: service.hostname }).toEqual({ name, hostname: name });
    }
    const env = first.environment!;
    expect(required(env.SVC_BASE_URL, 'SVC_BASE_URL')).toBe(true);
    expect(required(env.SVC_ENCRYPTION_KEY, 'SVC_ENCRYPTION_KEY')).toBe(true);
    expect(env.SVC_DATABASE_URL).toMatch(/^postgres:\/\/svc:\$\{POSTGRES_PASSWORD:\?[^}]+\}@postgres:5432\/svc$/);
    expect(env.SVC_REDIS_URL).toMatch(/^redis:\/\/default:\$\{REDIS_PASSWORD:\?[^}]+\}@redis:6379\/0$/);
    expect(env.SVC_HTTP).toBe('0.0.0.0:3000');
  });

  test('no secret is in the file: every password and key comes from .env, and .env is never committed', () => {
    const secrets = (service: Service) => [
      ...Object.entries(service.environment ?? {}).filter(([name]) => /PASSWORD|KEY|SECRET|AUTH/.test(name)).map(([, value]) => value),
      ...(service.command ?? []).filter((_, i, command) => command[i - 1] === '--requirepass'),
    ];
    const all = Object.values(scale.services).flatMap(secrets);
    expect(all.length).toBeGreaterThan(0);
    for (const value of all) expect(value).toMatch(/^\$\{[A-Z_]+:\?[^}]+\}$/);
    expect(read('.gitignore').split('\n')).toContain('.env');
  });

  test('the proxy names every instance, round robin, and appends the sender to X-Forwarded-For for SVC_TRUST_PROXY', () => {
    const mount = proxy?.volumes?.find((volume) => volume.endsWith(':/etc/nginx/nginx.conf:ro')) ?? '';
    const file = mount.replace(/^\.\//, '').split(':')[0]!;
    expect(existsSync(path.join(REPO_ROOT, file))).toBe(true);
    const config = read(file);
    const upstream = nginxUpstream(config);
    expect(upstream.servers.sort()).toEqual(instances.map(([, service]) => `${service.hostname}:${service.environment!.SVC_HTTP!.split(':')[1]}`).sort());
    // No balancing directive: nginx's default is round robin.
    expect(config).not.toMatch(/^\s*(least_conn|ip_hash|hash|random)\b/m);
    expect(config).toContain(`proxy_pass http://${upstream.name};`);
    expect(config).toMatch(/proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;/);
    // Two hops: the host's TLS proxy, then this one, which nothing but the host reaches.
    expect(proxy?.ports).toEqual(['127.0.0.1:3000:80']);
    expect(config).toMatch(/listen 80;/);
    for (const [, service] of instances) expect(service.environment?.SVC_TRUST_PROXY).toBe('2');
  });

  test('every service has a health check (svc /healthz, pg_isready, redis-cli ping), and each starts after what it needs is healthy', () => {
    for (const [name, service] of instances) {
      expect({ name, check: healthcheck(service) }).toEqual({ name, check: expect.stringMatching(/\/dev\/tcp\/127\.0\.0\.1\/3000\b.*GET \/healthz .* 200 /) });
      expect({ name, depends_on: service.depends_on }).toEqual({ name, depends_on: { postgres: { condition: 'service_healthy' }, redis: { condition: 'service_healthy' } } });
    }
    expect(healthcheck(scale.services.postgres)).toContain('pg_isready -U svc -d svc');
    expect(healthcheck(scale.services.redis)).toContain('redis-cli ping');
    expect(proxy?.depends_on).toEqual(Object.fromEntries(instances.map(([name]) => [name, { condition: 'service_healthy' }])));
  });
});
