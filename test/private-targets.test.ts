import { afterEach, describe, expect, test } from 'bun:test';
import { nonPublicRange } from '../src/lib/address-ranges.ts';
import { pinnedRequest, type Fetch, type Resolve } from '../src/platforms/egress.ts';
import { startFakePlatformA } from './fakes/platform-a.ts';
import { startFakePlatformB } from './fakes/platform-b.ts';
import { startFakePlatformC } from './fakes/platform-c.ts';
import { bearer, closeAppAndFakes, jsonRequest, makeTestApp, tempDir, type TestApp, type TestAppOptions } from './helpers/app.ts';
import { createStore, rows } from './helpers/stores.ts';
import { getStore } from './helpers/sync.ts';

// Store-supplied targets and the connection errors shown for them (issue 27, item 5). Nothing here
// sends traffic beyond loopback: names are resolved by a stubbed resolver, and the refusal tests
// connect through a fetch that records what svc asked for and never opens a connection, so a
// regression that stops refusing cannot reach a real network either.

const KEYS = { consumerKey: 'ck_target', consumerSecret: 'cs_target' };

let t: TestApp | null = null;
const stops: (() => void)[] = [];
afterEach(async () => {
  await closeAppAndFakes(t, stops);
  t = null;
});

/** What svc tried to fetch, answered without any connection. */
function recordingFetch(answer: (url: URL, init: RequestInit & { tls?: { serverName?: string } }) => Response = () => Response.json([], { status: 200 })) {
  const seen: { url: string; host: string | null; serverName: string | undefined }[] = [];
  const fetch: Fetch = async (url, init) => {
    seen.push({ url, host: new Headers(init.headers).get('host'), serverName: init.tls?.serverName });
    return answer(new URL(url), init);
  };
  return { seen, fetch };
}

/** A resolver of made-up names (never asked of DNS): each name's answers, in turn. */
function stubResolver(names: Record<string, string[][]>) {
  const asked: string[] = [];
  const resolve: Resolve = async (hostname) => {
    asked.push(hostname);
    const answers = names[hostname];
    if (!answers) throw Object.assign(new Error(`no such name ${hostname}`), { code: 'ENOTFOUND' });
    return answers.length > 1 ? answers.shift()! : answers[0]!;
  };
  return { asked, resolve };
}

async function refusingApp(options: { resolve?: Resolve; fetch?: Fetch; env?: Record<string, string> } = {}, more: TestAppOptions = {}): Promise<TestApp> {
  t = await makeTestApp({ ...more, env: { SVC_ALLOW_PRIVATE_TARGETS: '0', ...options.env }, webhooks: { connectAnswerMs: 60_000, ...more.webhooks, egress: { ...(options.resolve && { resolve: options.resolve }), ...(options.fetch && { fetch: options.fetch }) } } });
  return t;
}

const siteStore = (siteUrl: string, domain = 'shop.example.com') => ({ platform: 'platform-c', domain, currency: 'EUR', credentials: { siteUrl, ...KEYS } });

describe('address ranges svc does not connect to for a store-supplied target', () => {
  test('loopback, private, link-local, unique-local, metadata, reserved, and IPv4-mapped or embedded forms of them are named; public addresses are not', () => {
    const cases: [string, string | null][] = [
      ['127.0.0.1', 'a loopback address'],
      ['127.255.0.9', 'a loopback address'],
      ['10.1.2.3', 'a private address'],
      ['172.16.0.1', 'a private address'],
      ['172.31.255.255', 'a private address'],
      ['192.168.1.1', 'a private address'],
      ['169.254.169.254', 'a cloud metadata address'],
      ['169.254.170.2', 'a cloud metadata address'],
      ['100.100.100.200', 'a cloud metadata address'],
      ['192.0.0.192', 'a cloud metadata address'],
      ['169.254.1.1', 'a link-local address'],
      ['100.64.0.1', 'a shared (carrier-grade NAT) address'],
      ['0.0.0.0', 'a "this network" address'],
      ['224.0.0.1', 'a multicast address'],
      ['255.255.255.255', 'a reserved address'],
      ['198.18.0.1', 'a benchmarking address'],
      ['192.0.2.1', 'a documentation address'],
      ['::', 'the unspecified address'],
      ['::1', 'a loopback address'],
      ['fe80::1', 'a link-local address'],
      ['fe80::1%eth0', 'a link-local address'],
      ['fc00::1', 'a unique-local address'],
      ['fd12:3456::1', 'a unique-local address'],
      ['fd00:ec2::254', 'a cloud metadata address'],
      ['FD00:EC2::254', 'a cloud metadata address'],
      ['fec0::1', 'a site-local address'],
      ['ff02::1', 'a multicast address'],
      ['2001:db8::1', 'a documentation address'],
      ['2001::1', 'an IETF protocol address (Teredo, benchmarking, ORCHID)'],
      ['::ffff:127.0.0.1', 'a loopback address'],
      ['::ffff:7f00:1', 'a loopback address'],
      ['::ffff:10.0.0.1', 'a private address'],
      ['::ffff:169.254.169.254', 'a cloud metadata address'],
      ['::ffff:0:a9fe:a9fe', 'a cloud metadata address'],
      ['::7f00:1', 'a loopback address'],
      ['64:ff9b::a00:1', 'a private address'],
      ['64:ff9b::10.0.0.1', 'a private address'],
      ['2002:a9fe:a9fe::1', 'a cloud metadata address'],
      ['64:ff9b:1::1', 'a local-use NAT64 address'],
      ['4000::1', 'a reserved address'],
      ['93.184.215.14', null],
      ['172.32.0.1', null],
      ['8.8.8.8', null],
      ['::ffff:8.8.8.8', null],
      ['2606:4700::1111', null],
      ['2a02:8800::1', null],
      ['2002:808:808::1', null],
      ['shop.example.com', 'not an IP address'],
    ];
    for (const [ip, range] of cases) expect(nonPublicRange(ip), ip).toBe(range);
  });
});

describe('store-supplied URLs that reach private addresses are refused with 400', () => {
  test('a platform-C site URL on a loopback, private, link-local, unique-local, metadata or mapped address: 400 private_target, nothing saved, no connection tried', async () => {
    const recorder = recordingFetch();
    const names = stubResolver({ 'metadata.example': [['169.254.169.254']], 'intranet.example': [['93.184.215.14', '10.20.30.40']], 'v6.example': [['fd00:ec2::254']] });
    await refusingApp({ fetch: recorder.fetch, resolve: names.resolve });
    const refused: [string, string][] = [
      ['http://127.0.0.1:8080', '127.0.0.1 is a loopback address'],
      ['http://[::1]', '::1 is a loopback address'],
      ['http://10.0.0.1', '10.0.0.1 is a private address'],
      ['http://192.168.0.10:8443', '192.168.0.10 is a private address'],
      ['http://169.254.169.254', '169.254.169.254 is a cloud metadata address'],
      ['http://[fd00:ec2::254]', 'fd00:ec2::254 is a cloud metadata address'],
      ['http://[fe80::1]', 'fe80::1 is a link-local address'],
      ['http://[::ffff:127.0.0.1]', '::ffff:7f00:1 is a loopback address'],
      ['http://0x7f.1', '127.0.0.1 is a loopback address'],
      ['http://2130706433', '127.0.0.1 is a loopback address'],
      ['http://localhost:3000', 'localhost is a loopback address'],
      ['https://shop.localhost', 'shop.localhost is a loopback address'],
      ['https://metadata.example', 'metadata.example resolves to 169.254.169.254, a cloud metadata address'],
      // Every address a name resolves to must be public: the system may connect to any of them.
      ['https://intranet.example', 'intranet.example resolves to 10.20.30.40, a private address'],
      ['https://v6.example', 'v6.example resolves to fd00:ec2::254, a cloud metadata address'],
    ];
    for (const [siteUrl, why] of refused) {
      const { status, store } = await createStore(t!, siteStore(siteUrl));
      expect(status, siteUrl).toBe(400);
      expect(store.error, siteUrl).toBe('private_target');
      expect(store.detail, siteUrl).toContain(`credentials.siteUrl: ${why}`);
      expect(store.detail, siteUrl).toContain('SVC_ALLOW_PRIVATE_TARGETS=1');
    }
    expect((await rows(t!, 'stores'))).toHaveLength(0);
    expect((await rows(t!, 'jobs'))).toHaveLength(0);
    expect(recorder.seen).toEqual([]);
    expect(names.asked).toEqual(['metadata.example', 'intranet.example', 'v6.example']);
  });

  test('PUT .../credentials with a site URL on a private address: 400, the saved credentials unchanged', async () => {
    // The site's hooks API as far as registration needs it: an empty list, then each hook created.
    const recorder = recordingFetch((url) => (url.search ? Response.json([]) : Response.json({ id: 1 }, { status: 201 })));
    const names = stubResolver({ 'shop.example.com': [['93.184.215.14']] });
    await refusingApp({ fetch: recorder.fetch, resolve: names.resolve });
    const created = await createStore(t!, siteStore('https://shop.example.com'));
    expect(created.status).toBe(201);
    const before = (await rows(t!, 'stores'))[0];
    const res = await t!.request(`/api/v1/admin/stores/${created.store.id}/credentials`, jsonRequest('PUT', { credentials: { siteUrl: 'http://169.254.169.254', ...KEYS } }, bearer(await t!.keyWith('admin'))));
    expect(res.status).toBe(400);
    expect((await res.json()).error).toBe('private_target');
    expect((await rows(t!, 'stores'))[0]).toEqual(before);
  });

  test('a platform-A shop domain without SVC_PLATFORM_A_API_BASE is a store-supplied target too: refused when it resolves to a private address', async () => {
    const recorder = recordingFetch();
    const names = stubResolver({ 'inside.myplatform-a.com': [['192.168.7.7']] });
    await refusingApp({ fetch: recorder.fetch, resolve: names.resolve });
    const { status, store } = await createStore(t!, { platform: 'platform-a', domain: 'inside.myplatform-a.com', currency: 'EUR', credentials: { clientSecret: 's', accessToken: 'tok' } });
    expect(status).toBe(400);
    expect(store).toMatchObject({ error: 'private_target', detail: expect.stringContaining('domain: inside.myplatform-a.com resolves to 192.168.7.7, a private address') });
    expect(recorder.seen).toEqual([]);
  });

  test('operator-set API bases (SVC_PLATFORM_*_API_BASE) stay trusted: a base on loopback is used without SVC_ALLOW_PRIVATE_TARGETS', async () => {
    const b = startFakePlatformB({ storeHash: 'trusted', accessToken: 'tok-b', currency: 'EUR' });
    const a = startFakePlatformA([{ domain: 'trusted.myplatform-a.com', accessToken: 'tok-a', clientSecret: 'sec-a', currency: 'EUR' }]);
    stops.push(b.stop, a.stop);
    await refusingApp({ env: { SVC_PLATFORM_B_API_BASE: b.url, SVC_PLATFORM_A_API_BASE: a.url } }, { listen: true });
    const storeB = await createStore(t!, { platform: 'platform-b', domain: 'b.example.com', credentials: { storeHash: 'trusted', accessToken: 'tok-b' } });
    expect(storeB.store).toMatchObject({ currency: 'EUR', hooks: { status: 'registered' } });
    const storeA = await createStore(t!, { platform: 'platform-a', domain: 'trusted.myplatform-a.com', credentials: { clientSecret: 'sec-a', accessToken: 'tok-a' } });
    expect(storeA.store).toMatchObject({ currency: 'EUR', hooks: { status: 'registered' } });
  });

  test('private targets are refused by default: SVC_ALLOW_PRIVATE_TARGETS unset', async () => {
    const recorder = recordingFetch();
    t = await makeTestApp({ env: { SVC_ALLOW_PRIVATE_TARGETS: undefined }, webhooks: { egress: { fetch: recorder.fetch } } });
    expect(t.config.allowPrivateTargets).toBe(false);
    const { status, store } = await createStore(t, siteStore('http://10.0.0.1'));
    expect([status, store.error]).toEqual([400, 'private_target']);
    expect(recorder.seen).toEqual([]);
  });

  test('with SVC_ALLOW_PRIVATE_TARGETS=1 a site on svc\'s own network is connected', async () => {
    const c = startFakePlatformC({ ...KEYS, currency: 'EUR' });
    stops.push(c.stop);
    t = await makeTestApp({ listen: true, env: { SVC_ALLOW_PRIVATE_TARGETS: '1' } });
    const created = await createStore(t, siteStore(c.siteUrl));
    expect(created.status).toBe(201);
    expect(created.store.hooks.status).toBe('registered');
  });
});

describe('the checked address is the one connected to (DNS rebinding)', () => {
  test('each call resolves the name once, checks every address, and connects to the checked one: a name that turns private between calls is refused, never reached', async () => {
    // Public for the check at saving and for the first call, private from then on (a rebinding name).
    const names = stubResolver({ 'rebind.example': [['93.184.215.14'], ['93.184.215.14'], ['10.9.9.9']] });
    const recorder = recordingFetch();
    await refusingApp({ fetch: recorder.fetch, resolve: names.resolve });
    const created = await createStore(t!, siteStore('https://rebind.example:8443/shop'));
    expect(created.status).toBe(201);
    // The hooks list went to the checked address, with the name as Host and TLS server name; the
    // next call resolved again, found the private address and was refused before any connection.
    expect(recorder.seen).toEqual([{ url: 'https://93.184.215.14:8443/shop/wp-json/wc/v3/webhooks?per_page=100', host: 'rebind.example:8443', serverName: 'rebind.example' }]);
    expect(created.store.hooks).toMatchObject({ status: 'failed', error: expect.stringContaining('refused: rebind.example resolves to 10.9.9.9, a private address') });
    expect(recorder.seen.some((request) => request.url.includes('10.9.9.9'))).toBe(false);
  });

  test('a pinned HTTPS request still verifies the certificate against the site\'s name, not the address', async () => {
    const dir = tempDir('svc-tls-');
    stops.push(dir.remove);
    const openssl = Bun.spawnSync(['openssl', 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${dir.dir}/key.pem`, '-out', `${dir.dir}/cert.pem`, '-days', '1', '-subj', '/CN=shop.test', '-addext', 'subjectAltName=DNS:shop.test']);
    expect(openssl.exitCode).toBe(0);
    const [key, cert] = [await Bun.file(`${dir.dir}/key.pem`).text(), await Bun.file(`${dir.dir}/cert.pem`).text()];
    const server = Bun.serve({ hostname: '127.0.0.1', port: 0, tls: { key, cert }, fetch: (request) => Response.json({ host: request.headers.get('host') }) });
    stops.push(() => server.stop(true));
    const send = (name: string) => {
      const pinned = pinnedRequest(new URL(`https://${name}:${server.port}/x`), '127.0.0.1');
      return fetch(pinned.url, { headers: { host: pinned.host }, tls: { ca: cert, ...(pinned.serverName && { serverName: pinned.serverName }) } });
    };
    expect(await (await send('shop.test')).json()).toEqual({ host: `shop.test:${server.port}` });
    await expect(send('other.test')).rejects.toThrow();
  });
});

describe('connection errors name the kind of failure, never a remote body, and never tell ports apart', () => {
  test('a closed port, a port answering something that is not HTTP, and TLS to a non-TLS port read alike for a store-supplied site', async () => {
    const garbage = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data: (socket) => void socket.end('SSH-2.0-OpenSSH_9.6\r\n') } });
    const closed = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data: () => {} } });
    const closedPort = closed.port;
    closed.stop(true);
    stops.push(() => garbage.stop(true));
    t = await makeTestApp({ env: { SVC_ALLOW_PRIVATE_TARGETS: '1' } });
    const errors: string[] = [];
    for (const [n, siteUrl] of [`http://127.0.0.1:${closedPort}`, `http://127.0.0.1:${garbage.port}`, `https://127.0.0.1:${garbage.port}`].entries()) {
      const { store } = await createStore(t, siteStore(siteUrl, `shop${n}.example.com`));
      expect(store.hooks.status, siteUrl).toBe('failed');
      errors.push(store.hooks.error);
    }
    expect(errors[0]).toBe('GET /wp-json/wc/v3/webhooks: could not connect (no HTTP answer: refused, reset, or a TLS or protocol failure)');
    expect(new Set(errors).size).toBe(1);
  });

  test('an operator-set API base gets the kind of failure itself (TLS failed)', async () => {
    const plain = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => Response.json({}) });
    stops.push(() => plain.stop(true));
    t = await makeTestApp({ env: { SVC_PLATFORM_B_API_BASE: `https://127.0.0.1:${plain.port}` } });
    const { store } = await createStore(t, { platform: 'platform-b', domain: 'b.example.com', credentials: { storeHash: 'h1', accessToken: 'tok' } });
    expect(store.hooks.error).toBe('GET /stores/h1/v3/hooks: TLS failed');
  });

  test('what the platform said is never shown: an error status names the status, a GraphQL error its code at most, a refused subscription nothing of the platform\'s text', async () => {
    const c = startFakePlatformC({ ...KEYS, currency: 'EUR' });
    c.pageHooks.beforeRequest = () => new Response('Fatal error: secret-internal-path /var/www/wp-config.php', { status: 500 });
    const a = startFakePlatformA([{ domain: 'says.myplatform-a.com', accessToken: 'tok-a', clientSecret: 'sec-a', currency: 'EUR' }]);
    a.hooks.beforeQuery = ({ query }) =>
      query.includes('webhookSubscriptions')
        ? Response.json({ errors: [{ message: 'secret-internal-path: resolver exploded', extensions: { code: 'INTERNAL_SERVER_ERROR' } }] })
        : undefined;
    stops.push(c.stop, a.stop);
    t = await makeTestApp({ env: { SVC_PLATFORM_A_API_BASE: a.url } });
    const storeC = await createStore(t, siteStore(c.siteUrl));
    expect(storeC.store.hooks.error).toBe('GET /wp-json/wc/v3/webhooks answered 500');
    const storeA = await createStore(t, { platform: 'platform-a', domain: 'says.myplatform-a.com', credentials: { clientSecret: 'sec-a', accessToken: 'tok-a' } });
    expect(storeA.store.hooks.error).toBe('the GraphQL query answered an error (INTERNAL_SERVER_ERROR)');
    a.hooks.beforeQuery = ({ query }) =>
      query.includes('webhookSubscriptionCreate')
        ? Response.json({ data: { webhookSubscriptionCreate: { webhookSubscription: null, userErrors: [{ field: ['callbackUrl'], message: 'secret-internal-path refused' }] } } })
        : undefined;
    const again = await t.request(`/api/v1/admin/stores/${storeA.store.id}/hooks`, { method: 'POST', headers: bearer(await t.keyWith('admin')) });
    expect((await again.json()).hooks.error).toBe('webhookSubscriptionCreate products/create: the platform refused the subscription');
    expect(JSON.stringify(await getStore(t, storeA.store.id))).not.toContain('secret-internal-path');
  });

});

describe('what a platform answers is never followed', () => {
  test('an id the platform answers with goes into a URL path only when it has the shape of an id', async () => {
    const c = startFakePlatformC({ ...KEYS, currency: 'EUR' });
    stops.push(c.stop);
    t = await makeTestApp({ listen: true });
    const paths: string[] = [];
    // The site lists an existing hook for svc's URL whose id would climb out of the hooks path.
    c.pageHooks.beforeRequest = async (request, url) => {
      paths.push(`${request.method} ${url.pathname}`);
      const storeId = (await rows(t!, 'stores'))[0]?.id;
      if (request.method === 'GET' && url.pathname.endsWith('/webhooks')) return Response.json(['product.created', 'product.updated', 'product.deleted'].map((topic) => ({ id: '../products/1', topic, delivery_url: `${t!.url}/api/v1/platform-c/webhooks?store=${storeId}` })));
    };
    const { store } = await createStore(t, siteStore(c.siteUrl));
    expect(store.hooks.status).toBe('registered');
    expect(paths.filter((p) => p.includes('/products'))).toEqual([]);
    expect(paths.filter((p) => p.startsWith('POST'))).toHaveLength(3);
  });

  test('a redirect is not followed: the call fails naming it, and the target it named sees nothing', async () => {
    let reached = 0;
    const elsewhere = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch: () => {
        reached++;
        return Response.json([]);
      },
    });
    const c = startFakePlatformC({ ...KEYS, currency: 'EUR' });
    c.pageHooks.beforeRequest = () => Response.redirect(`http://127.0.0.1:${elsewhere.port}/steal`, 302);
    stops.push(() => elsewhere.stop(true), c.stop);
    t = await makeTestApp();
    const { store } = await createStore(t, siteStore(c.siteUrl));
    expect(store.hooks.error).toBe('GET /wp-json/wc/v3/webhooks answered 302 (a redirect: svc follows none)');
    expect(reached).toBe(0);
  });
});
