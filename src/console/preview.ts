import { randomSecret } from '../lib/crypto.ts';
import { html } from '../lib/html-template.ts';

/** The style attributes of the embed script (spec §4.5) the builder offers, without `data-style-`. */
export const STYLE_ATTRIBUTES = ['accent', 'bg', 'fg', 'border', 'radius', 'font', 'font-size', 'spacing', 'theme'] as const;

export interface PreviewRequest {
  key: string;
  target: string;
  entityType: string;
  entityId: string;
  styles: Record<string, string>;
}

/** The form fields the console posts into the preview frame. */
export function previewRequestOf(form: URLSearchParams): PreviewRequest {
  const field = (name: string, max = 200) => (form.get(name) ?? '').trim().slice(0, max);
  const styles: Record<string, string> = {};
  for (const name of STYLE_ATTRIBUTES) {
    const value = field(`style-${name}`, 100);
    if (value) styles[name] = value;
  }
  return { key: field('key'), target: field('target'), entityType: field('entityType', 20), entityId: field('entityId', 255), styles };
}

/**
 * The element a simple `#id` or `.class` target selector names, so the sample page has it; other
 * selectors get a plain container and the script renders after it.
 */
function targetElement(selector: string) {
  const id = /^#([A-Za-z][\w-]*)$/.exec(selector)?.[1];
  if (id) return { markup: html`<div id="${id}"></div>`, selector };
  const className = /^\.([A-Za-z][\w-]*)$/.exec(selector)?.[1];
  if (className) return { markup: html`<div class="${className}"></div>`, selector };
  return { markup: html``, selector: '' };
}

/**
 * A sample storefront page running the real /embed.js with the builder's attributes. Everything
 * from the form lands in escaped attribute values; the page's CSP admits only its own nonce.
 */
export function previewPage(request: PreviewRequest): { html: string; csp: string } {
  const nonce = randomSecret(16);
  const target = targetElement(request.target);
  const styleAttributes = Object.entries(request.styles).map(([name, value]) => html` data-style-${name}="${value}"`);
  const page = html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Widget preview</title><link rel="icon" href="data:,">
<style nonce="${nonce}">
body{margin:0;font-family:Georgia,'Times New Roman',serif;color:#23201c;background:#fbfaf7;line-height:1.5}
.shop{display:flex;justify-content:space-between;align-items:center;padding:.75rem 1.25rem;border-bottom:1px solid #e2ddd3;font:600 .95rem system-ui,sans-serif;letter-spacing:.04em;text-transform:uppercase}
main{max-width:44rem;margin:0 auto;padding:1.25rem}
.price{font:600 1.1rem system-ui,sans-serif;color:#7a4e1d}
.note{font:.8rem system-ui,sans-serif;color:#6d6659;border-top:1px dashed #d8d1c4;margin-top:2rem;padding-top:.5rem}
</style></head>
<body><header class="shop"><span>Sample storefront</span><span aria-hidden="true">Cart (0)</span></header>
<main><h1>Sample product</h1><p class="price">€49.00</p><p>This page stands in for a storefront. The FAQ below is rendered by <code>/embed.js</code> with the snippet's attributes.</p>
${target.markup}
<script nonce="${nonce}" src="/embed.js" async data-api-key="${request.key}"${target.selector ? html` data-target="${target.selector}"` : ''} data-entity-type="${request.entityType}" data-entity-id="${request.entityId}"${styleAttributes}></script>
<p class="note">Preview of the real widget on a sample page served by svc.</p></main></body></html>`;
  const csp = `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'self'`;
  return { html: page.value, csp };
}
