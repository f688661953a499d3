import { describe, expect, test } from 'bun:test';
import { testWidget } from '../helpers/app.ts';
import { makePage } from '../helpers/dom.ts';

/** Evaluate the served bundle in a happy-dom page, as a browser would run the script tag. */
async function loadBundle(url: string, readyState: 'loading' | 'complete', times = 1) {
  const { js } = await testWidget();
  const page = makePage(url, '<main>Product</main>', { 'data-api-key': 'sk_live_public' });
  const requests: string[] = [];
  const win = page.window as unknown as Window & { Svc?: unknown };
  win.fetch = (async (input: string) => {
    requests.push(String(input));
    return Response.json({ items: [{ id: 'a', question: 'Q?', answer: 'A.' }] });
  }) as typeof fetch;
  Object.defineProperty(page.document, 'readyState', { configurable: true, get: () => readyState });
  const infos: string[] = [];
  const original = console.info;
  console.info = (message: string) => infos.push(message);
  try {
    // The bundle only reaches the page through `window`, as in a browser.
    for (let i = 0; i < times; i++) new Function('window', js)(win);
    if (readyState === 'loading') {
      expect(requests).toHaveLength(0);
      page.document.dispatchEvent(new (page.window as unknown as typeof globalThis).Event('DOMContentLoaded'));
    }
    // Without a platform-B global the widget first gives it 3 x 500 ms to appear (spec §4.5).
    for (let i = 0; i < 100 && !infos.some((m) => m.includes('rendered')); i++) await Bun.sleep(25);
  } finally {
    console.info = original;
  }
  return { page, requests, infos, win };
}

describe('embed.js bundle in a page', () => {
  test('waits for DOMContentLoaded while the document is loading', async () => {
    const { page, requests } = await loadBundle('https://shop.example.com/products/p1', 'loading');
    expect(requests).toEqual(['https://svc.example.com/api/v1/public/faqs?type=product&ref=p1']);
    expect(page.document.querySelectorAll('.svc-faq')).toHaveLength(1);
  });

  test('starts at once when DOMContentLoaded has already fired', async () => {
    const { page, requests } = await loadBundle('https://shop.example.com/products/p1', 'complete');
    expect(requests).toHaveLength(1);
    expect(page.document.querySelectorAll('.svc-faq')).toHaveLength(1);
  });

  test('including the script twice renders once and defines one global', async () => {
    const { page, requests, win } = await loadBundle('https://shop.example.com/products/p1', 'complete', 2);
    expect(requests).toHaveLength(1);
    expect(page.document.querySelectorAll('.svc-faq')).toHaveLength(1);
    expect(page.document.querySelectorAll('script[type="application/ld+json"]')).toHaveLength(1);
    expect(win.Svc).toEqual({ version: '1', started: true });
  });
});
