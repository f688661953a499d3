import type { Availability, ProductData, ProductVariant } from '../catalog/product-data.ts';
import type { Platform } from '../stores/types.ts';
import type { PublicFaq } from '../faqs/store.ts';
import { gtinProperty, validGtin } from '../lib/gtin.ts';
import { blocksToText, htmlToBlocks, htmlToPlainText, safeHttpUrl, type TextBlock } from '../lib/html.ts';
import { serializeJsonLd } from '../lib/json-ld.ts';
import type { ReturnPolicy, ShippingRate, StoreSettings } from '../stores/settings.ts';
import { markdownBlocks, markdownText, markdownUrl } from './markdown.ts';

export const SIGNAL_FORMATS = ['jsonld', 'llm', 'md', 'meta'] as const;
export type SignalFormat = (typeof SIGNAL_FORMATS)[number];

/** Every text answer names its charset, JSON ones as Bun's `Response.json` does (svc's other JSON answers). */
export const CONTENT_TYPES: Record<SignalFormat, string> = {
  jsonld: 'application/ld+json;charset=utf-8',
  llm: 'application/json;charset=utf-8',
  md: 'text/markdown; charset=utf-8',
  meta: 'application/json;charset=utf-8',
};

/**
 * Everything a product's signals are rendered from: the catalogue's product with its variants (as
 * stored: barcodes as sent, published only when they are a valid GTIN), enrichment, approved FAQs,
 * store settings.
 */
export interface SignalSource
  extends Pick<ProductData, 'productId' | 'title' | 'price' | 'availability' | 'sku' | 'barcode' | 'mpn' | 'brand' | 'images' | 'url' | 'options' | 'variants'> {
  platform: Platform;
  storeId: string;
  storeDomain: string;
  /** The description as text blocks (lib/html.ts), from the platform's HTML. */
  description: TextBlock[];
  currency: string | null;
  settings: StoreSettings;
  summary: string;
  highlights: string[];
  attributes: Record<string, string>;
  faqs: PublicFaq[];
  /** Max of the product's, its enrichment's and its FAQs' change times (epoch ms). */
  updatedAt: number;
}

export type SignalLinks = Record<'self' | 'jsonld' | 'llm' | 'md' | 'sitemap' | 'llmsTxt', string>;

/** The store's own discovery files: `sitemap.xml` and `llms.txt` under the store-scoped prefix. */
export function storeBase(baseUrl: string, platform: Platform, storeId: string): string {
  return `${baseUrl}/api/v1/${platform}/stores/${encodeURIComponent(storeId)}`;
}

/** Links are always store-scoped: unlike `/api/v1/{platform}/products/{id}`, they can never be ambiguous. */
export function signalLinks(baseUrl: string, platform: Platform, storeId: string, productId: string): SignalLinks {
  const store = storeBase(baseUrl, platform, storeId);
  const base = `${store}/products/${encodeURIComponent(productId)}`;
  return { self: `${base}.meta`, jsonld: `${base}.jsonld`, llm: `${base}.llm`, md: `${base}.md`, sitemap: `${store}/sitemap.xml`, llmsTxt: `${store}/llms.txt` };
}

const SCHEMA = 'https://schema.org/';
const SCHEMA_AVAILABILITY: Record<Availability, string> = { in_stock: `${SCHEMA}InStock`, out_of_stock: `${SCHEMA}OutOfStock`, backorder: `${SCHEMA}BackOrder` };
const AVAILABILITY_TEXT: Record<Availability, string> = { in_stock: 'In stock', out_of_stock: 'Out of stock', backorder: 'On backorder' };
const CONDITION: Record<NonNullable<StoreSettings['itemCondition']>, string> = { new: 'NewCondition', used: 'UsedCondition', refurbished: 'RefurbishedCondition', damaged: 'DamagedCondition' };
const RETURN_WINDOW: Record<ReturnPolicy['window'], string> = { finite: 'MerchantReturnFiniteReturnWindow', unlimited: 'MerchantReturnUnlimitedWindow', not_permitted: 'MerchantReturnNotPermitted' };
const RETURN_FEES: Record<NonNullable<ReturnPolicy['fees']>, string> = { free: 'FreeReturn', customer_pays: 'ReturnFeesCustomerResponsibility', shipping_fee: 'ReturnShippingFees' };
const RETURN_METHOD: Record<NonNullable<ReturnPolicy['method']>, string> = { mail: 'ReturnByMail', store: 'ReturnInStore', kiosk: 'ReturnAtKiosk' };
const RETURN_METHOD_TEXT: Record<NonNullable<ReturnPolicy['method']>, string> = { mail: 'by mail', store: 'in store', kiosk: 'at a kiosk' };
const RETURN_FEES_TEXT: Record<NonNullable<ReturnPolicy['fees']>, string> = { free: 'free', customer_pays: 'at the customer\'s cost', shipping_fee: 'for a return shipping fee' };

/** Option names schema.org has a property for (Google's `variesBy` values); other options become `additionalProperty`. */
const VARIES_BY: Record<string, 'size' | 'color' | 'material' | 'pattern'> = { size: 'size', color: 'color', colour: 'color', material: 'material', pattern: 'pattern' };

/** A decimal price string greater than zero (merchant listings require price > 0), else null. */
function offerPrice(price: string | null): string | null {
  return price !== null && /^\d{1,12}(\.\d{1,6})?$/.test(price) && Number(price) > 0 ? price : null;
}

const compact = <T extends Record<string, unknown>>(object: T): Partial<T> =>
  Object.fromEntries(Object.entries(object).filter(([, v]) => v !== null && v !== undefined && !(Array.isArray(v) && v.length === 0))) as Partial<T>;

const imagesOf = (source: SignalSource) => source.images.map(safeHttpUrl).filter((u): u is string => u !== null);
const descriptionText = (source: SignalSource) => blocksToText(source.description);
const description = (source: SignalSource) => descriptionText(source) || source.summary;

/** A product with several variants is a group; one with a single variant (or none listed) is one product. */
const isGroup = (source: SignalSource) => source.variants.length > 1;

/** What a single-variant product is sold as: its one variant's values, else the product's. */
function soleOffer(source: SignalSource): Pick<ProductVariant, 'sku' | 'barcode' | 'mpn' | 'price' | 'compareAtPrice' | 'availability'> {
  const only = source.variants[0];
  return {
    sku: only?.sku ?? source.sku,
    barcode: only?.barcode ?? source.barcode,
    mpn: only?.mpn ?? source.mpn,
    price: only?.price ?? source.price,
    compareAtPrice: only?.compareAtPrice ?? null,
    availability: only?.availability ?? source.availability,
  };
}

function priceRange(source: SignalSource): { min: string; max: string } | null {
  const prices = (isGroup(source) ? source.variants.map((v) => v.price) : [soleOffer(source).price]).map(offerPrice).filter((p): p is string => p !== null);
  if (prices.length === 0) return null;
  const sorted = prices.slice().sort((a, b) => Number(a) - Number(b));
  return { min: sorted[0]!, max: sorted[sorted.length - 1]! };
}

/** A variant's label: its platform title, else its option values. */
const variantLabel = (variant: ProductVariant) => variant.title ?? (Object.values(variant.options).join(' / ') || variant.variantId);

const money = (amount: string, currency: string) => ({ '@type': 'MonetaryAmount', value: Number(amount), currency });
const countryList = (countries: string[]) => (countries.length === 1 ? countries[0] : countries);
const days = (range: { min: number; max: number }) => ({ '@type': 'QuantitativeValue', minValue: range.min, maxValue: range.max, unitCode: 'DAY' });

function shippingDetails(rates: ShippingRate[], currency: string): object[] {
  return rates.map((rate) => ({
    '@type': 'OfferShippingDetails',
    shippingRate: money(rate.price, currency),
    shippingDestination: rate.countries.map((country) => ({ '@type': 'DefinedRegion', addressCountry: country })),
    deliveryTime: { '@type': 'ShippingDeliveryTime', handlingTime: days(rate.handlingDays), transitTime: days(rate.transitDays) },
  }));
}

function returnPolicy(policy: ReturnPolicy, currency: string): object {
  return compact({
    '@type': 'MerchantReturnPolicy',
    applicableCountry: countryList(policy.countries),
    returnPolicyCategory: `${SCHEMA}${RETURN_WINDOW[policy.window]}`,
    merchantReturnDays: policy.days ?? null,
    returnMethod: policy.method ? `${SCHEMA}${RETURN_METHOD[policy.method]}` : null,
    returnFees: policy.fees ? `${SCHEMA}${RETURN_FEES[policy.fees]}` : null,
    returnShippingFeesAmount: policy.shippingFee ? money(policy.shippingFee, currency) : null,
  });
}

/** One `Offer`, with the store's merchant-listing facts; null without a positive price and a currency. */
function offer(source: SignalSource, values: { price: string | null; compareAtPrice: string | null; availability: Availability | null; url: string | null }): object | null {
  const price = offerPrice(values.price);
  const currency = source.currency;
  if (!price || !currency) return null;
  const was = offerPrice(values.compareAtPrice);
  const { itemCondition, shipping, returnPolicy: policy } = source.settings;
  return compact({
    '@type': 'Offer',
    price,
    priceCurrency: currency,
    priceSpecification: was ? { '@type': 'UnitPriceSpecification', priceType: `${SCHEMA}StrikethroughPrice`, price: was, priceCurrency: currency } : null,
    availability: values.availability ? SCHEMA_AVAILABILITY[values.availability] : null,
    itemCondition: itemCondition ? `${SCHEMA}${CONDITION[itemCondition]}` : null,
    url: values.url,
    shippingDetails: shipping ? shippingDetails(shipping, currency) : null,
    hasMerchantReturnPolicy: policy ? returnPolicy(policy, currency) : null,
  });
}

const propertyValues = (entries: [string, string][]) => entries.map(([name, value]) => ({ '@type': 'PropertyValue', name, value }));

/** schema.org properties of the options that have one (`color: "Olive"`), the rest as `additionalProperty`. */
function optionProperties(variant: ProductVariant): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  const others: [string, string][] = [];
  for (const [name, value] of Object.entries(variant.options)) {
    const property = VARIES_BY[name.toLowerCase()];
    if (property && !(property in properties)) properties[property] = value;
    else others.push([name, value]);
  }
  return { ...properties, additionalProperty: propertyValues(others) };
}

function variesBy(source: SignalSource): string[] {
  const properties = source.options.map((name) => VARIES_BY[name.toLowerCase()]).filter((p): p is NonNullable<typeof p> => p !== undefined);
  return [...new Set(properties)].map((property) => `${SCHEMA}${property}`);
}

/** The merchant-listing Product (single variant) or ProductGroup with one Product per variant. */
function productNode(source: SignalSource, links: SignalLinks): object {
  const url = safeHttpUrl(source.url);
  const images = imagesOf(source);
  const common = {
    '@id': `${links.jsonld}#product`,
    name: source.title,
    description: description(source),
    image: images,
    brand: source.brand ? { '@type': 'Brand', name: source.brand } : null,
    url,
  };
  const attributes = propertyValues(Object.entries(source.attributes));
  if (!isGroup(source)) {
    const sole = soleOffer(source);
    return compact({
      '@type': 'Product',
      ...common,
      sku: sole.sku,
      ...gtinProperty(sole.barcode),
      mpn: sole.mpn,
      offers: offer(source, { ...sole, url }),
      additionalProperty: attributes,
    });
  }
  return compact({
    '@type': 'ProductGroup',
    ...common,
    productGroupID: source.sku ?? source.productId,
    variesBy: variesBy(source),
    hasVariant: source.variants.map((variant) => {
      const variantUrl = safeHttpUrl(variant.url) ?? url;
      const variantImage = safeHttpUrl(variant.image);
      return compact({
        '@type': 'Product',
        '@id': `${links.jsonld}#variant-${encodeURIComponent(variant.variantId)}`,
        name: `${source.title} - ${variantLabel(variant)}`,
        image: variantImage ? [variantImage] : images,
        sku: variant.sku,
        ...gtinProperty(variant.barcode),
        mpn: variant.mpn,
        ...optionProperties(variant),
        url: variantUrl,
        offers: offer(source, { ...variant, url: variantUrl }),
      });
    }),
    additionalProperty: attributes,
  });
}

/** schema.org `@graph`: the product (Product or ProductGroup) and, with approved FAQs, an FAQPage. */
export function jsonLdDocument(source: SignalSource, links: SignalLinks): object {
  const graph: object[] = [productNode(source, links)];
  if (source.faqs.length > 0) {
    graph.push({
      '@type': 'FAQPage',
      '@id': `${links.jsonld}#faq`,
      mainEntity: source.faqs.map((faq) => ({ '@type': 'Question', name: faq.question, acceptedAnswer: { '@type': 'Answer', text: faq.answer } })),
    });
  }
  return { '@context': 'https://schema.org', '@graph': graph };
}

/** Store facts as plain data for `.llm` (null when not set). */
function terms(settings: StoreSettings) {
  return { itemCondition: settings.itemCondition ?? null, returnPolicy: settings.returnPolicy ?? null, shipping: settings.shipping ?? null };
}

/** The `svc.llm/2` document (docs/signals.md): compact, plain text, stable keys. */
export function llmDocument(source: SignalSource, links: SignalLinks): object {
  const range = priceRange(source);
  const sole = soleOffer(source);
  const group = isGroup(source);
  return {
    schema: 'svc.llm/2',
    name: source.title,
    summary: source.summary,
    description: descriptionText(source) || null,
    highlights: source.highlights,
    attributes: source.attributes,
    price: range && source.currency ? { min: range.min, max: range.max, currency: source.currency } : null,
    availability: source.availability,
    brand: source.brand,
    sku: group ? source.sku : sole.sku,
    gtin: validGtin(group ? source.barcode : sole.barcode),
    mpn: group ? source.mpn : sole.mpn,
    url: safeHttpUrl(source.url),
    images: imagesOf(source),
    options: group ? source.options : [],
    variants: group
      ? source.variants.map((v) => ({
          id: v.variantId,
          title: variantLabel(v),
          options: v.options,
          price: offerPrice(v.price),
          compareAtPrice: offerPrice(v.compareAtPrice),
          availability: v.availability,
          sku: v.sku,
          gtin: validGtin(v.barcode),
          mpn: v.mpn,
          url: safeHttpUrl(v.url),
          image: safeHttpUrl(v.image),
        }))
      : [],
    terms: terms(source.settings),
    faqs: source.faqs.map((faq) => ({ question: faq.question, answer: htmlToPlainText(faq.answer) })),
    updatedAt: new Date(source.updatedAt).toISOString(),
    source: { platform: source.platform, store: source.storeDomain, storeId: source.storeId, productId: source.productId, url: links.llm },
  };
}

const priceText = (range: { min: string; max: string }, currency: string) => (range.min === range.max ? `${range.min} ${currency}` : `${range.min}–${range.max} ${currency}`);
const dayText = (range: { min: number; max: number }) => (range.min === range.max ? `${range.min}` : `${range.min}–${range.max}`);

/** One line per variant: options, price (and the struck-through one), availability, identifiers. */
function variantLine(variant: ProductVariant, currency: string | null): string {
  const options = Object.entries(variant.options).map(([name, value]) => `${name}: ${value}`);
  const price = offerPrice(variant.price);
  const was = offerPrice(variant.compareAtPrice);
  const parts = [
    options.length > 0 ? options.join(', ') : variantLabel(variant),
    price && currency ? `${price} ${currency}${was ? ` (was ${was})` : ''}` : null,
    variant.availability ? AVAILABILITY_TEXT[variant.availability] : null,
    variant.sku ? `SKU ${variant.sku}` : null,
    validGtin(variant.barcode) ? `GTIN ${validGtin(variant.barcode)}` : null,
    variant.mpn ? `MPN ${variant.mpn}` : null,
  ];
  return `- ${parts.filter((p): p is string => p !== null).map(markdownText).join(' · ')}`;
}

function shippingLines(settings: StoreSettings, currency: string | null): string[] {
  const lines: string[] = [];
  for (const rate of settings.shipping ?? []) {
    const cost = Number(rate.price) === 0 ? 'free' : currency ? `${rate.price} ${currency}` : rate.price;
    lines.push(`- Shipping to ${rate.countries.join(', ')}: ${cost}, handled in ${dayText(rate.handlingDays)} days, delivered in ${dayText(rate.transitDays)} days`);
  }
  const policy = settings.returnPolicy;
  if (policy) {
    const where = policy.countries.join(', ');
    if (policy.window === 'not_permitted') lines.push(`- Returns: not accepted (${where})`);
    else {
      const window = policy.window === 'finite' ? `within ${policy.days} days` : 'at any time';
      const fee = policy.fees === 'shipping_fee' && policy.shippingFee ? `for a return shipping fee of ${policy.shippingFee}${currency ? ` ${currency}` : ''}` : RETURN_FEES_TEXT[policy.fees!];
      lines.push(`- Returns: ${window}, ${RETURN_METHOD_TEXT[policy.method!]}, ${fee} (${where})`);
    }
  }
  if (settings.itemCondition) lines.push(`- Condition: ${settings.itemCondition}`);
  return lines;
}

/** llms.txt conventions: H1 name, `>` summary, description, H2 sections, links to the other formats. */
export function markdownDocument(source: SignalSource, links: SignalLinks): string {
  const lines: string[] = [`# ${markdownText(source.title)}`, '', `> ${markdownText(source.summary)}`, ''];
  if (source.description.length > 0) lines.push(markdownBlocks(source.description), '');
  const range = priceRange(source);
  const group = isGroup(source);
  const sole = soleOffer(source);
  const gtin = validGtin(group ? source.barcode : sole.barcode);
  const details: [string, string | null][] = [
    ['Price', range && source.currency ? priceText(range, source.currency) : null],
    ['Availability', source.availability ? AVAILABILITY_TEXT[source.availability] : null],
    ['Brand', source.brand],
    ['SKU', group ? source.sku : sole.sku],
    ['GTIN', gtin],
    ['MPN', group ? source.mpn : sole.mpn],
    ...Object.entries(source.attributes),
  ];
  const present = details.filter((d): d is [string, string] => d[1] !== null && d[1] !== '');
  if (present.length > 0) lines.push('## Details', '', ...present.map(([name, value]) => `- ${markdownText(name)}: ${markdownText(value)}`), '');
  if (group) lines.push('## Variants', '', ...source.variants.map((v) => variantLine(v, source.currency)), '');
  const terms = shippingLines(source.settings, source.currency);
  if (terms.length > 0) lines.push('## Shipping and returns', '', ...terms, '');
  if (source.highlights.length > 0) lines.push('## Highlights', '', ...source.highlights.map((h) => `- ${markdownText(h)}`), '');
  if (source.faqs.length > 0) {
    lines.push('## FAQ', '');
    for (const faq of source.faqs) lines.push(`### ${markdownText(faq.question)}`, '', markdownBlocks(htmlToBlocks(faq.answer)), '');
  }
  const url = safeHttpUrl(source.url);
  lines.push('## Links', '');
  if (url) lines.push(`- [Product page](${markdownUrl(url)}): the store's own page`);
  imagesOf(source).forEach((image, i) => lines.push(`- [Image ${i + 1}](${markdownUrl(image)})`));
  lines.push(
    `- [JSON-LD](${markdownUrl(links.jsonld)}): schema.org ${group ? 'ProductGroup' : 'Product'} and FAQPage`,
    `- [LLM JSON](${markdownUrl(links.llm)}): svc.llm/2 document`,
    `- [Signals index](${markdownUrl(links.self)}): every format and its links`,
    `- [Store index](${markdownUrl(links.llmsTxt)}): every product of the store`,
    '',
  );
  return lines.join('\n');
}

/** The discovery entry point: every signal plus absolute links to each format, itself and the store's indexes. */
export function metaDocument(source: SignalSource, links: SignalLinks): object {
  return {
    schema: 'svc.meta/2',
    platform: source.platform,
    storeId: source.storeId,
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
