#!/usr/bin/env node
// Scan pages of a deployed storefront and print one svc telemetry payload per page (NDJSON), for
// `svc probe send --bulk` or @svc/probe's sendBulk. Node >= 18, no dependencies: reads the served
// HTML (no JavaScript runs), which is what crawlers see.
//   node scan-pages.mjs https://shop.example.com/ https://shop.example.com/products/trail-runner > scans.ndjson

const ENTITIES = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };
const codePoint = (whole, n) => (n <= 0x10ffff ? String.fromCodePoint(n) : whole);
const decode = (text) =>
  text.replace(/&(?:#(\d+)|#x([0-9a-f]+)|([a-z]+));/gi, (whole, dec, hex, name) =>
    dec ? codePoint(whole, Number(dec)) : hex ? codePoint(whole, parseInt(hex, 16)) : (ENTITIES[name.toLowerCase()] ?? whole),
  );
const textOf = (html) => decode(html.replace(/<[^>]*>/g, ' ')).replace(/\s+/g, ' ').trim();

/** Every `<name ...>` start tag as a map of its (lower-cased) attribute names to decoded values. */
function tags(html, name) {
  return [...html.matchAll(new RegExp(`<${name}\\b([^>]*)>`, 'gi'))].map(([, attributes]) =>
    Object.fromEntries([...attributes.matchAll(/([^\s=/]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))/g)].map((m) => [m[1].toLowerCase(), decode(m[2] ?? m[3] ?? m[4])])),
  );
}

function scanPage(url, html) {
  const metas = tags(html, 'meta');
  const meta = (name) => metas.find((m) => m.name?.toLowerCase() === name)?.content;
  const title = textOf(/<title\b[^>]*>([\s\S]*?)<\/title>/i.exec(html)?.[1] ?? '');
  const description = meta('description');
  const robots = meta('robots');
  const canonical = tags(html, 'link').find((l) => l.rel?.toLowerCase() === 'canonical')?.href;
  const lang = tags(html, 'html')[0]?.lang;
  const headings = (level) => [...html.matchAll(new RegExp(`<h${level}\\b[^>]*>([\\s\\S]*?)</h${level}>`, 'gi'))].map((m) => textOf(m[1])).filter(Boolean);
  const openGraph = Object.fromEntries(metas.filter((m) => m.property?.startsWith('og:')).map((m) => [m.property, m.content ?? '']));
  const jsonLd = [...html.matchAll(/<script\b[^>]*type\s*=\s*["']?application\/ld\+json["']?[^>]*>([\s\S]*?)<\/script>/gi)].flatMap(([, json]) => {
    try {
      return [JSON.parse(json)];
    } catch {
      return [];
    }
  });
  const h1 = headings(1);
  const page = new URL(url);
  return {
    hostname: page.hostname,
    url: page.origin + page.pathname,
    scannedAt: new Date().toISOString(),
    signals: {
      title: { value: title, length: title.length },
      ...(description !== undefined && { description: { value: description, length: description.length } }),
      ...(canonical && { canonical: { value: new URL(canonical, url).href } }),
      ...(robots !== undefined && { robots }),
      ...(lang && { lang }),
      headings: { h1, h2: headings(2) },
      openGraph,
      jsonLd,
    },
    signalPresence: {
      title: title !== '',
      description: !!description,
      jsonLd: jsonLd.length > 0,
      openGraph: Object.keys(openGraph).length > 0,
      h1: h1.length > 0,
      canonical: !!canonical,
      robots: robots !== undefined,
    },
  };
}

const urls = process.argv.slice(2);
if (urls.length === 0) {
  console.error('usage: node scan-pages.mjs URL...');
  process.exit(2);
}
let failed = false;
for (const url of urls) {
  const response = await fetch(url, { headers: { 'user-agent': 'svc-probe-ci/1' }, redirect: 'follow' }).catch((error) => error);
  if (!(response instanceof Response) || !response.ok) {
    console.error(`${url}: ${response instanceof Response ? `HTTP ${response.status}` : response.message}`);
    failed = true;
    continue;
  }
  console.log(JSON.stringify(scanPage(response.url, await response.text())));
}
process.exit(failed ? 1 : 0);
