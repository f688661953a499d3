import type { FaqEntry } from './context.ts';
import { sanitizeAnswer } from './sanitize.ts';

const STYLE_ID = 'svc-faq-style';
const THEMES = ['light', 'dark', 'auto'];

// Every colour and size reads a custom property. Unset properties leave the declaration invalid at
// computed-value time, so the storefront's own (inherited) styles apply; themes only set defaults.
const LIGHT = '--svc-faq-bg:#fff;--svc-faq-fg:#1a1a1a;--svc-faq-border:#d9d9d9;--svc-faq-accent:#1a56db';
const DARK = '--svc-faq-bg:#17181a;--svc-faq-fg:#f1f1f1;--svc-faq-border:#3a3b3e;--svc-faq-accent:#8ab4f8';
const CSS =
  `.svc-faq{color:var(--svc-faq-fg);background:var(--svc-faq-bg);font-family:var(--svc-faq-font);font-size:var(--svc-faq-font-size);border-radius:var(--svc-faq-radius);padding:0 var(--svc-faq-spacing,0)}` +
  `.svc-faq[data-theme=light]{${LIGHT}}.svc-faq[data-theme=dark]{${DARK}}.svc-faq[data-theme=auto]{${LIGHT}}` +
  // A theme paints a background of its own, so its text keeps clear of that background's edges.
  `.svc-faq[data-theme]{padding:0 var(--svc-faq-spacing,1em)}` +
  `@media (prefers-color-scheme:dark){.svc-faq[data-theme=auto]{${DARK}}}` +
  `.svc-faq__item{border-bottom:1px solid var(--svc-faq-border,currentColor)}` +
  `.svc-faq__question{cursor:pointer;font-weight:600;padding:var(--svc-faq-spacing,.75em) 0}` +
  `.svc-faq__question:focus-visible{outline:2px solid var(--svc-faq-accent,currentColor);outline-offset:2px}` +
  `.svc-faq__item[open]>.svc-faq__question{color:var(--svc-faq-accent)}` +
  `.svc-faq__answer{padding:0 0 var(--svc-faq-spacing,.75em)}.svc-faq__answer a{color:var(--svc-faq-accent)}`;

/** One stylesheet per page, stamped with the page's CSP nonce so a strict `style-src` admits it. */
export function ensureStyles(doc: Document, nonce: string): void {
  if (doc.getElementById(STYLE_ID)) return;
  const style = doc.createElement('style');
  style.id = STYLE_ID;
  if (nonce) style.setAttribute('nonce', nonce);
  style.textContent = CSS;
  (doc.head ?? doc.documentElement).appendChild(style);
}

/** `data-style-<name>` -> `--svc-faq-<name>`; `data-style-theme` -> `data-theme` when allowed. */
export function applyStyleAttributes(script: HTMLScriptElement | null, container: HTMLElement): void {
  if (!script) return;
  for (const attr of Array.from(script.attributes)) {
    const name = /^data-style-([a-z0-9-]+)$/.exec(attr.name)?.[1];
    if (!name || !attr.value) continue;
    if (name === 'theme') {
      if (THEMES.includes(attr.value)) container.setAttribute('data-theme', attr.value);
    } else {
      // setProperty goes through the CSSOM: a value cannot escape into other declarations.
      container.style.setProperty(`--svc-faq-${name}`, attr.value);
    }
  }
}

/** The accordion: one `<details>/<summary>` per entry (keyboard-operable and announced natively). */
export function renderAccordion(doc: Document, container: HTMLElement, entries: FaqEntry[]): string[] {
  container.classList.add('svc-faq');
  container.setAttribute('role', 'region');
  container.setAttribute('aria-label', 'Frequently asked questions');
  const answers: string[] = [];
  const list = doc.createDocumentFragment();
  for (const entry of entries) {
    const item = doc.createElement('details');
    item.className = 'svc-faq__item';
    const summary = doc.createElement('summary');
    summary.className = 'svc-faq__question';
    summary.textContent = entry.question;
    const answer = doc.createElement('div');
    answer.className = 'svc-faq__answer';
    answer.appendChild(sanitizeAnswer(entry.answer, doc));
    answers.push(answer.innerHTML);
    item.append(summary, answer);
    list.appendChild(item);
  }
  container.replaceChildren(list);
  return answers;
}
