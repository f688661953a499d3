import type { EntityContext } from './context.ts';
import { detectContext } from './detect.ts';
import { fetchFaqs, type Fetch } from './fetch-faqs.ts';
import { injectJsonLd } from './jsonld.ts';
import { applyStyleAttributes, ensureStyles, renderAccordion } from './render.ts';

/** The widget's one global; a second copy of the script finds it and stays idle. */
interface SvcNamespace {
  version: string;
  started: boolean;
}

export interface WidgetEnv {
  window: Window;
  document: Document;
  script: HTMLScriptElement | null;
  fetch: Fetch;
  wait(ms: number): Promise<void>;
  console: Pick<Console, 'info' | 'warn'>;
}

const PREFIX = '[Svc] embed.js:';
const describe = (c: EntityContext) => `${c.type}/${c.id} (detected via ${c.method})`;

/** Where the accordion goes: `data-target`, else `[data-svc-faq]`, else right after the script tag. */
function findContainer(env: WidgetEnv): HTMLElement | string {
  const { document: doc, script } = env;
  const selector = script?.getAttribute('data-target');
  if (selector) {
    let target: Element | null = null;
    try {
      target = doc.querySelector(selector);
    } catch {
      return `data-target ${JSON.stringify(selector)} is not a valid selector; nothing rendered`;
    }
    return (target as HTMLElement | null) ?? `data-target ${JSON.stringify(selector)} matched no element; nothing rendered`;
  }
  const marked = doc.querySelector<HTMLElement>('[data-svc-faq]');
  if (marked) return marked;
  const container = doc.createElement('div');
  // A script in <head> cannot host visible content: fall back to the end of <body>, which shifts nothing.
  if (script?.parentElement && script.closest('body')) script.after(container);
  else doc.body.appendChild(container);
  return container;
}

/** Detect, fetch, render, inject JSON-LD. Problems are logged once; nothing is thrown. */
export async function run(env: WidgetEnv): Promise<void> {
  const context = await detectContext(env);
  if (!context) {
    env.console.info(`${PREFIX} no product, category or page detected; nothing rendered`);
    return;
  }
  const apiKey = env.script?.getAttribute('data-api-key')?.trim();
  if (!apiKey) {
    env.console.warn(`${PREFIX} data-api-key is missing on the script tag; nothing rendered`);
    return;
  }
  const origin = new URL(env.script?.src || '/', env.document.baseURI).origin;
  env.console.info(`${PREFIX} fetching FAQ for ${describe(context)}`);
  const result = await fetchFaqs(env.fetch, origin, apiKey, context);
  if (!result.ok) {
    env.console.warn(`${PREFIX} ${result.problem}`);
    return;
  }
  if (result.entries.length === 0) {
    env.console.info(`${PREFIX} no approved FAQ entries for ${describe(context)}; nothing rendered`);
    return;
  }
  const container = findContainer(env);
  if (typeof container === 'string') {
    env.console.warn(`${PREFIX} ${container}`);
    return;
  }
  const nonce = env.script?.nonce ?? '';
  ensureStyles(env.document, nonce);
  applyStyleAttributes(env.script, container);
  const answers = renderAccordion(env.document, container, result.entries);
  injectJsonLd(env.document, result.entries, answers, nonce);
  const count = result.entries.length;
  env.console.info(`${PREFIX} rendered ${count} FAQ ${count === 1 ? 'entry' : 'entries'} for ${describe(context)}`);
}

/** Entry point: once per page, after DOMContentLoaded (or at once if that has already fired). */
export function start(win: Window = window): void {
  const doc = win.document;
  const scope = win as unknown as { Svc?: SvcNamespace };
  if (scope.Svc?.started) return;
  scope.Svc = { version: '1', started: true };
  const env: WidgetEnv = {
    window: win,
    document: doc,
    // currentScript is only set while this script first runs, so it is captured now.
    script: (doc.currentScript as HTMLScriptElement | null) ?? doc.querySelector<HTMLScriptElement>('script[src*="/embed.js"]'),
    fetch: (url, init) => win.fetch(url, init),
    wait: (ms) => new Promise((resolve) => win.setTimeout(resolve, ms)),
    console,
  };
  const go = () => {
    run(env).catch((error: unknown) => env.console.warn(`${PREFIX} stopped: ${(error as Error)?.message ?? error}`));
  };
  if (doc.readyState === 'loading') doc.addEventListener('DOMContentLoaded', go, { once: true });
  else go();
}
