import { describe, expect, test } from 'bun:test';
import type { FaqEntry } from '../../widget/context.ts';
import { serializeJsonLd } from '../../widget/jsonld.ts';
import { run, type WidgetEnv } from '../../widget/start.ts';
import { makePage, type Page } from '../helpers/dom.ts';

const ENTRIES: FaqEntry[] = [
  { id: 'f1', question: 'Is it waterproof?', answer: '<p>Yes, to <strong>10 m</strong>.</p>' },
  { id: 'f2', question: 'Shipping time?', answer: 'Two days. See <a href="https://shop.example.com/pages/shipping">shipping</a>.' },
];

interface Harness {
  page: Page;
  logs: string[];
  requests: { url: string; headers: Record<string, string> }[];
  env: WidgetEnv;
}

function harness(page: Page, respond: (url: string) => Response | Promise<Response> = () => Response.json({ items: ENTRIES })): Harness {
  const logs: string[] = [];
  const requests: Harness['requests'] = [];
  const env: WidgetEnv = {
    window: page.window as unknown as Window,
    document: page.document,
    script: page.script,
    wait: async () => {},
    fetch: async (url, init) => {
      requests.push({ url, headers: init.headers as Record<string, string> });
      return respond(url);
    },
    console: { info: (m: string) => logs.push(`info ${m}`), warn: (m: string) => logs.push(`warn ${m}`) },
  };
  return { page, logs, requests, env };
}

const productPage = (attrs: Record<string, string> = {}, body = '<main><p>Intro</p></main>') =>
  makePage('https://shop.example.com/products/blue-shirt', body, { 'data-api-key': 'sk_live_public', ...attrs });

describe('widget run', () => {
  test('fetches from the server the script came from, with the API key, and logs the spec messages verbatim', async () => {
    const h = harness(productPage());
    await run(h.env);
    expect(h.requests).toEqual([
      { url: 'https://svc.example.com/api/v1/public/faqs?type=product&ref=blue-shirt', headers: { 'X-Api-Key': 'sk_live_public' } },
    ]);
    expect(h.logs).toEqual([
      'info [Svc] embed.js: fetching FAQ for product/blue-shirt (detected via url-path)',
      'info [Svc] embed.js: rendered 2 FAQ entries for product/blue-shirt (detected via url-path)',
    ]);
  });

  test('one entry is logged in the singular: "rendered 1 FAQ entry"', async () => {
    const h = harness(productPage(), () => Response.json({ items: ENTRIES.slice(0, 1) }));
    await run(h.env);
    expect(h.page.document.querySelectorAll('details.svc-faq__item')).toHaveLength(1);
    expect(h.logs.at(-1)).toBe('info [Svc] embed.js: rendered 1 FAQ entry for product/blue-shirt (detected via url-path)');
  });

  test('renders an accordion of details/summary after the script tag, leaving content above it in place', async () => {
    const h = harness(productPage());
    await run(h.env);
    const doc = h.page.document;
    const container = doc.querySelector('.svc-faq')!;
    expect(container.previousElementSibling).toBe(h.page.script);
    expect(doc.body.firstElementChild?.tagName).toBe('MAIN');
    const items = container.querySelectorAll('details.svc-faq__item');
    expect(items).toHaveLength(2);
    expect(items[0]!.querySelector('summary')!.textContent).toBe('Is it waterproof?');
    expect(items[0]!.querySelector('.svc-faq__answer')!.innerHTML).toBe('<p>Yes, to <strong>10 m</strong>.</p>');
    expect(container.getAttribute('aria-label')).toBe('Frequently asked questions');
  });

  test('data-target wins, then [data-svc-faq]', async () => {
    const targeted = harness(productPage({ 'data-target': '#faq' }, '<div id="faq"></div><div data-svc-faq></div>'));
    await run(targeted.env);
    expect(targeted.page.document.querySelector('#faq.svc-faq')).not.toBeNull();
    const marked = harness(productPage({}, '<div id="faq"></div><div data-svc-faq></div>'));
    await run(marked.env);
    expect(marked.page.document.querySelector('[data-svc-faq].svc-faq')).not.toBeNull();
    const missing = harness(productPage({ 'data-target': '#nowhere' }));
    await run(missing.env);
    expect(missing.page.document.querySelector('.svc-faq')).toBeNull();
    expect(missing.logs.at(-1)).toBe('warn [Svc] embed.js: data-target "#nowhere" matched no element; nothing rendered');
  });

  test('injects one FAQPage JSON-LD block into head that matches the rendered entries', async () => {
    const h = harness(productPage());
    await run(h.env);
    const blocks = h.page.document.head.querySelectorAll('script[type="application/ld+json"]');
    expect(blocks).toHaveLength(1);
    const schema = JSON.parse(blocks[0]!.textContent!);
    expect(schema['@type']).toBe('FAQPage');
    const rendered = [...h.page.document.querySelectorAll('.svc-faq__item')].map((item) => ({
      name: item.querySelector('summary')!.textContent,
      text: item.querySelector('.svc-faq__answer')!.innerHTML,
    }));
    expect(schema.mainEntity.map((q: { name: string; acceptedAnswer: { text: string } }) => ({ name: q.name, text: q.acceptedAnswer.text }))).toEqual(rendered);
  });

  test('hostile FAQ text is inert: no element, handler or script from the text reaches the page', async () => {
    const hostile: FaqEntry[] = [
      {
        id: 'x',
        question: '<img src=x onerror="window.pwned=1"></script><script>window.pwned=2</script>',
        answer: '<img src=x onerror="window.pwned=3"><script>window.pwned=4</script><a href="javascript:alert(1)">click</a><p onclick="x()" style="color:red">ok</p><iframe src="https://evil.test"></iframe>',
      },
    ];
    const h = harness(productPage(), () => Response.json({ items: hostile }));
    await run(h.env);
    const doc = h.page.document;
    const container = doc.querySelector('.svc-faq')!;
    expect(container.querySelectorAll('img, script, iframe, [onerror], [onclick], [style]')).toHaveLength(0);
    expect(container.querySelector('summary')!.textContent).toBe(hostile[0]!.question);
    expect(container.querySelector('a')).toBeNull();
    expect(container.querySelector('.svc-faq__answer')!.innerHTML).toBe('click<p>ok</p>');
    expect((h.page.window as unknown as { pwned?: number }).pwned).toBeUndefined();
    const jsonLd = doc.head.querySelector('script[type="application/ld+json"]')!.textContent!;
    expect(jsonLd).not.toContain('<');
    expect(JSON.parse(jsonLd).mainEntity[0].name).toBe(hostile[0]!.question);
  });

  test('JSON-LD serialization escapes <, >, & and line separators', () => {
    const text = serializeJsonLd({ a: '</script><!-- & \u2028' });
    expect(text).toBe('{"a":"\\u003c/script\\u003e\\u003c!-- \\u0026 \\u2028"}');
    expect(JSON.parse(text)).toEqual({ a: '</script><!-- & \u2028' });
  });

  test('data-style-* attributes become custom properties; data-style-theme sets an allowed theme', async () => {
    const h = harness(productPage({ 'data-style-accent': '#ff0066', 'data-style-font-size': '15px', 'data-style-radius': '8px', 'data-style-theme': 'dark' }));
    await run(h.env);
    const container = h.page.document.querySelector('.svc-faq') as HTMLElement;
    expect(container.style.getPropertyValue('--svc-faq-accent')).toBe('#ff0066');
    expect(container.style.getPropertyValue('--svc-faq-font-size')).toBe('15px');
    expect(container.style.getPropertyValue('--svc-faq-radius')).toBe('8px');
    expect(container.getAttribute('data-theme')).toBe('dark');
    const bogus = harness(productPage({ 'data-style-theme': 'neon' }));
    await run(bogus.env);
    expect(bogus.page.document.querySelector('.svc-faq')!.hasAttribute('data-theme')).toBe(false);
  });

  test('the injected style carries the page CSP nonce and is added once', async () => {
    const page = productPage();
    page.script.nonce = 'n0nce';
    const h = harness(page);
    await run(h.env);
    await run(h.env);
    const styles = page.document.querySelectorAll('style#svc-faq-style');
    expect(styles).toHaveLength(1);
    expect(styles[0]!.getAttribute('nonce')).toBe('n0nce');
  });

  test('403 renders nothing and logs one clear message', async () => {
    const h = harness(productPage(), () => Response.json({ error: 'forbidden' }, { status: 403 }));
    await run(h.env);
    expect(h.page.document.querySelector('.svc-faq')).toBeNull();
    expect(h.page.document.querySelector('script[type="application/ld+json"]')).toBeNull();
    expect(h.logs.at(-1)).toBe(
      "warn [Svc] embed.js: FAQ request for product/blue-shirt was refused (403): check data-api-key and that this site's domain is in the key's allowedDomains",
    );
  });

  test('a network error renders nothing and logs one message', async () => {
    const h = harness(productPage(), () => Promise.reject(new TypeError('Failed to fetch')));
    await run(h.env);
    expect(h.page.document.querySelector('.svc-faq')).toBeNull();
    expect(h.logs.at(-1)).toBe(
      "warn [Svc] embed.js: FAQ request for product/blue-shirt failed (Failed to fetch): a network error, or this site's domain is not in the key's allowedDomains",
    );
  });

  test('an empty list renders nothing and injects no JSON-LD', async () => {
    const h = harness(productPage(), () => Response.json({ items: [] }));
    await run(h.env);
    expect(h.page.document.querySelector('.svc-faq')).toBeNull();
    expect(h.page.document.querySelector('script[type="application/ld+json"]')).toBeNull();
    expect(h.logs.at(-1)).toBe('info [Svc] embed.js: no approved FAQ entries for product/blue-shirt (detected via url-path); nothing rendered');
  });

  test('nothing detected: one console message, no request, nothing rendered', async () => {
    const h = harness(makePage('https://shop.example.com/about', '', { 'data-api-key': 'sk_live_public' }));
    await run(h.env);
    expect(h.requests).toHaveLength(0);
    expect(h.logs).toEqual(['info [Svc] embed.js: no product, category or page detected; nothing rendered']);
  });
});
