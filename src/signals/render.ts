import type { Availability, Platform } from '../db/schema/index.ts';
import type { PublicFaq } from '../faqs/store.ts';
import { htmlToPlainText, safeHttpUrl } from '../lib/html.ts';
import { serializeJsonLd } from '../lib/json-ld.ts';
import { markdownText, markdownUrl } from './markdown.ts';

export const SIGNAL_FORMATS = ['jsonld', 'llm', 'md', 'meta'] as const;
export type SignalFormat = (typeof SIGNAL_FORMATS)[number];

export const CONTENT_TYPES: Record<SignalFormat, string> = {
  jsonld: 'application/ld+json',
  llm: 'application/json',
  md: 'text/markdown; charset=utf-8',
  meta: 'application/json',
};

/** Everything a product's signals are rendered from: catalogue data, enrichment, approved FAQs. */
export interface SignalSource {
  platform: Platform;
  productId: string;
  storeDomain: string;
  title: string;
  descriptionText: string | null;
  price: string | null;
  currency: string | null;
  availability: Availability | null;
  sku: string | null;
  gtin: string | null;
  brand: string | null;
  images: string[];
  url: string | null;
  summary: string;
  highlights: string[];
  attributes: Record<string, string>;
  faqs: PublicFaq[];
  /** Max of the product's, its enrichment's and its FAQs' change times (epoch ms). */
  updatedAt: number;
}

export type SignalLinks = Record<'self' | 'jsonld' | 'llm' | 'md', string>;

export function signalLinks(baseUrl: string, platform: Platform, productId: string): SignalLinks {
  const base = `${baseUrl}/api/v1/${platform}/products/${encodeURIComponent(productId)}`;
  return { self: `${base}.meta`, jsonld: `${base}.jsonld`, llm: `${base}.llm`, md: `${base}.md` };
}

const SCHEMA_AVAILABILITY: Record<Availability, string> = {
  in_stock: 'https://schema.org/InStock',
  out_of_stock: 'https://schema.org/OutOfStock',
  backorder: 'https://schema.org/BackOrder',
};
const AVAILABILITY_TEXT: Record<Availability, string> = { in_stock: 'In stock', out_of_stock: 'Out of stock', backorder: 'On backorder' };

/** A decimal price string greater than zero (merchant listings require price > 0), else null. */
function offerPrice(price: string | null): string | null {
  return price !== null && /^\d{1,12}(\.\d{1,4})?$/.test(price) && Number(price) > 0 ? price : null;
}

/** schema.org's gtin8/12/13/14 property for a digit string of that length; `gtin` otherwise. */
function gtinProperty(gtin: string): Record<string, string> {
  const digits = /^\d+$/.test(gtin) ? gtin.length : 0;
  return [8, 12, 13, 14].includes(digits) ? { [`gtin${digits}`]: gtin } : { gtin };
}

const compact = <T extends Record<string, unknown>>(object: T): Partial<T> =>
  Object.fromEntries(Object.entries(object).filter(([, v]) => v !== null && v !== undefined && !(Array.isArray(v) && v.length === 0))) as Partial<T>;

const imagesOf = (source: SignalSource) => source.images.map(safeHttpUrl).filter((u): u is string => u !== null);
const description = (source: SignalSource) => source.descriptionText || source.summary;

/** schema.org `@graph`: a merchant-listing Product and, with approved FAQs, an FAQPage. */
export function jsonLdDocument(source: SignalSource, links: SignalLinks): object {
  const url = safeHttpUrl(source.url);
  const price = offerPrice(source.price);
  const product = compact({
    '@type': 'Product',
    '@id': `${links.jsonld}#product`,
    name: source.title,
    description: description(source),
    image: imagesOf(source),
    sku: source.sku,
    ...(source.gtin ? gtinProperty(source.gtin) : {}),
    brand: source.brand ? { '@type': 'Brand', name: source.brand } : null,
    url,
    offers:
      price && source.currency
        ? compact({ '@type': 'Offer', price, priceCurrency: source.currency, availability: source.availability ? SCHEMA_AVAILABILITY[source.availability] : null, url })
        : null,
    additionalProperty: Object.entries(source.attributes).map(([name, value]) => ({ '@type': 'PropertyValue', name, value })),
  });
  const graph: object[] = [product];
  if (source.faqs.length > 0) {
    graph.push({
      '@type': 'FAQPage',
      '@id': `${links.jsonld}#faq`,
      mainEntity: source.faqs.map((faq) => ({ '@type': 'Question', name: faq.question, acceptedAnswer: { '@type': 'Answer', text: faq.answer } })),
    });
  }
  return { '@context': 'https://schema.org', '@graph': graph };
}

/** The `svc.llm/1` document (README "Signal formats"): compact, plain text, stable keys. */
export function llmDocument(source: SignalSource, links: SignalLinks): object {
  const price = offerPrice(source.price);
  return {
    schema: 'svc.llm/1',
    name: source.title,
    summary: source.summary,
    description: source.descriptionText,
    highlights: source.highlights,
    attributes: source.attributes,
    price: price && source.currency ? { amount: price, currency: source.currency } : null,
    availability: source.availability,
    brand: source.brand,
    sku: source.sku,
    gtin: source.gtin,
    url: safeHttpUrl(source.url),
    images: imagesOf(source),
    faqs: source.faqs.map((faq) => ({ question: faq.question, answer: htmlToPlainText(faq.answer) })),
    updatedAt: new Date(source.updatedAt).toISOString(),
    source: { platform: source.platform, store: source.storeDomain, productId: source.productId, url: links.llm },
  };
}

/** llms.txt conventions: H1 name, `>` summary, description, H2 sections, links to the other formats. */
export function markdownDocument(source: SignalSource, links: SignalLinks): string {
  const lines: string[] = [`# ${markdownText(source.title)}`, '', `> ${markdownText(source.summary)}`, ''];
  if (source.descriptionText) lines.push(markdownText(source.descriptionText), '');
  const price = offerPrice(source.price);
  const details: [string, string | null][] = [
    ['Price', price && source.currency ? `${price} ${source.currency}` : null],
    ['Availability', source.availability ? AVAILABILITY_TEXT[source.availability] : null],
    ['Brand', source.brand],
    ['SKU', source.sku],
    ['GTIN', source.gtin],
    ...Object.entries(source.attributes),
  ];
  const present = details.filter((d): d is [string, string] => d[1] !== null && d[1] !== '');
  if (present.length > 0) lines.push('## Details', '', ...present.map(([name, value]) => `- ${markdownText(name)}: ${markdownText(value)}`), '');
  if (source.highlights.length > 0) lines.push('## Highlights', '', ...source.highlights.map((h) => `- ${markdownText(h)}`), '');
  if (source.faqs.length > 0) {
    lines.push('## FAQ', '');
    for (const faq of source.faqs) lines.push(`### ${markdownText(faq.question)}`, '', markdownText(htmlToPlainText(faq.answer)), '');
  }
  const url = safeHttpUrl(source.url);
  lines.push('## Links', '');
  if (url) lines.push(`- [Product page](${markdownUrl(url)}): the store's own page`);
  imagesOf(source).forEach((image, i) => lines.push(`- [Image ${i + 1}](${markdownUrl(image)})`));
  lines.push(
    `- [JSON-LD](${markdownUrl(links.jsonld)}): schema.org Product and FAQPage`,
    `- [LLM JSON](${markdownUrl(links.llm)}): svc.llm/1 document`,
    `- [Signals index](${markdownUrl(links.self)}): every format and its links`,
    '',
  );
  return lines.join('\n');
}

/** The discovery entry point: every signal plus absolute links to each format and itself. */
export function metaDocument(source: SignalSource, links: SignalLinks): object {
  return {
    schema: 'svc.meta/1',
    platform: source.platform,
    productId: source.productId,
    updatedAt: new Date(source.updatedAt).toISOString(),
    links,
    signals: { jsonld: jsonLdDocument(source, links), llm: llmDocument(source, links), md: markdownDocument(source, links) },
  };
}

export function renderSignal(format: SignalFormat, source: SignalSource, links: SignalLinks): string {
  switch (format) {
    case 'jsonld':
      return serializeJsonLd(jsonLdDocument(source, links));
    case 'llm':
      return JSON.stringify(llmDocument(source, links));
    case 'md':
      return markdownDocument(source, links);
    case 'meta':
      return serializeJsonLd(metaDocument(source, links));
  }
}
