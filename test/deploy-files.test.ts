import { describe, expect, test } from 'bun:test';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from './helpers/cli.ts';

// The deployment files are run by Docker and systemd, neither of which the tests have: these rules keep
// them honest by reading them as those tools would (Compose's YAML, nginx's upstream, a unit's INI).

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
const scaling = read('docs/scaling.md');

/** The svc instances of a Compose file: the services that run the svc image. */
const svcInstances = (file: Compose) => Object.entries(file.services).filter(([, service]) => service.image === 'svc:local');
const [, proxy] = Object.entries(scale.services).find(([, service]) => service.image?.startsWith('nginx:')) ?? [];
const healthcheck = (service: Service | undefined) => service?.healthcheck?.test.join(' ') ?? '';
/** `${NAME:?message}`: Compose refuses to start without NAME. */
const required = (value: string | undefined, name: string) => new RegExp(`^\\$\\{${name}:\\?[^}]+\\}$`).test(value ?? '');

/** An nginx `upstream` block: its name, its directives (comments left out) and the addresses of its `server` lines. */
function nginxUpstream(config: string): { name: string; directives: string[]; servers: string[] } {
  const block = /upstream\s+(\S+)\s*\{([^}]*)\}/.exec(config.replace(/#.*$/gm, ''));
  if (!block) return { name: '', directives: [], servers: [] };
  const directives = block[2]!.split(';').map((directive) => directive.trim()).filter(Boolean);
  return { name: block[1]!, directives, servers: directives.filter((d) => /^server\s/.test(d)).map((d) => d.split(/\s+/)[1]!) };
}

/** A systemd unit as sections of key = value lines (a key may repeat, as systemd allows). */
function parseUnit(text: string): Record<string, Record<string, string[]>> {
  const sections: Record<string, Record<string, string[]>> = {};
  let current: Record<string, string[]> | null = null;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const section = /^\[([A-Za-z]+)\]$/.exec(line);
    if (section) {
      current = sections[section[1]!] = {};
      continue;
    }
    const pair = /^([A-Za-z]+)=(.*)$/.exec(line);
    if (!pair || !current) throw new Error(`not a unit file line: ${JSON.stringify(raw)}`);
    (current[pair[1]!] ??= []).push(pair[2]!);
  }
  return sections;
}

/** The fenced block of `lang` that follows `after` in docs/scaling.md. */
function blockAfter(after: string, lang: string): string {
  const at = scaling.indexOf(after);
  const block = new RegExp('```' + lang + '\\n([\\s\\S]*?)```').exec(scaling.slice(at));
  return at < 0 || !block ? '' : block[1]!;
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

  test('a service under a profile requires no variable: Compose reads every service\'s variables before it picks the profiles, so `docker compose up` would stop for a setting of a service it does not start', () => {
    const text = read('compose.yaml');
    for (const [name, service] of Object.entries(single.services).filter(([, service]) => service.profiles)) {
      // The service's lines, up to the next top-level key or service.
      const at = text.indexOf(`\n  ${name}:\n`);
      const lines = text.slice(at + 1).split('\n').slice(1);
      const end = lines.findIndex((line) => /^(  )?\S/.test(line));
      const own = lines.slice(0, end < 0 ? undefined : end).filter((line) => !line.trim().startsWith('#')).join('\n');
      expect(at, name).toBeGreaterThan(0);
      expect(own, `${name} (profiles ${service.profiles})`).not.toMatch(/\$\{[A-Z_]+:?\?/);
    }
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
    // Nothing but servers and their connection settings: no balancing method, so nginx's default, round robin.
    expect(upstream.directives.map((directive) => directive.split(/\s+/)[0]).filter((name) => !['server', 'zone', 'keepalive', 'resolver'].includes(name!))).toEqual([]);
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

describe('docs/scaling.md: N instances with systemd', () => {
  test('the templated unit parses as a unit file: one port per instance from its name, the shared EnvironmentFile', () => {
    const unit = parseUnit(blockAfter('`/etc/systemd/system/svc@.service`:', 'ini'));
    expect(Object.keys(unit)).toEqual(['Unit', 'Service', 'Install']);
    const service = unit.Service!;
    expect(service.ExecStart).toEqual(['/usr/local/bin/svc serve --http 127.0.0.1:%i']);
    expect(service.EnvironmentFile).toEqual(['/etc/svc.env']);
    expect(service.User).toEqual(['svc']);
    expect(service.Restart).toEqual(['on-failure']);
    expect(unit.Install!.WantedBy).toEqual(['multi-user.target']);
  });

  test('the shared environment file sets what every instance needs and no instance\'s own port', () => {
    const names = blockAfter('### With systemd', 'sh').split('\n').filter(Boolean).map((line) => line.split('=')[0]);
    expect(names).toEqual(expect.arrayContaining(['SVC_DATABASE_URL', 'SVC_REDIS_URL', 'SVC_BASE_URL', 'SVC_ENCRYPTION_KEY', 'SVC_TRUST_PROXY']));
    expect(names).not.toContain('SVC_HTTP');
  });

  test('the proxy in front names every instance the example starts', () => {
    const started = [...scaling.matchAll(/systemctl enable --now ((?:svc@\d+ ?)+)/g)].flatMap((m) => m[1]!.trim().split(' ')).map((unitName) => `127.0.0.1:${unitName.slice('svc@'.length)}`);
    expect(started.length).toBe(3);
    expect(nginxUpstream(blockAfter('### With systemd', 'nginx')).servers).toEqual(started);
  });
});
