import type { FaqEntry } from './context.ts';

const MARKER = 'data-svc-faq-jsonld';

/** JSON that cannot close its `<script>` element or open a comment, whatever the text holds. */
export function serializeJsonLd(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** FAQPage for exactly the rendered entries (`answers` are the rendered answer markup). */
export function faqPageSchema(entries: FaqEntry[], answers: string[]): object {
  return {
    '@context': 'https://schema.org',
    '@type': 'FAQPage',
    mainEntity: entries.map((entry, i) => ({
      '@type': 'Question',
      name: entry.question,
      acceptedAnswer: { '@type': 'Answer', text: answers[i] ?? '' },
    })),
  };
}

/** One standalone JSON-LD block in `<head>`; never a second one. */
export function injectJsonLd(doc: Document, entries: FaqEntry[], answers: string[], nonce: string): void {
  if (entries.length === 0 || doc.querySelector(`script[${MARKER}]`)) return;
  const script = doc.createElement('script');
  script.type = 'application/ld+json';
  script.setAttribute(MARKER, '');
  if (nonce) script.setAttribute('nonce', nonce);
  script.textContent = serializeJsonLd(faqPageSchema(entries, answers));
  (doc.head ?? doc.documentElement).appendChild(script);
}
