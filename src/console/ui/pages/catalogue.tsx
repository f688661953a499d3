import { useEffect, useState } from 'preact/hooks';
import type { EntryView } from '../../../catalog/entries.ts';
import type { ProductView } from '../../../catalog/products.ts';
import { api, ApiFailure, type Page } from '../api.ts';
import type { PageProps } from '../app.tsx';
import { BASE } from '../router.ts';
import { Badge, DataTable, Empty, ErrorNotice, formatTime, Loading, Notice, PageHeader, Pager, StorePicker, TextArea, useAction, useLoad, usePager } from '../ui.tsx';
import { useStoreChoice } from './store-choice.ts';
import { inWords } from '../words.ts';

type Product = ProductView & { enrichedAt: string | null };
interface Enrichment {
  summary: string;
  highlights: string[];
  attributes: Record<string, string>;
  updatedAt: string;
}

const SIGNALS: [string, string][] = [
  ['jsonld', 'JSON-LD'],
  ['llm', 'LLM JSON'],
  ['md', 'Markdown'],
  ['meta', 'Index (.meta)'],
];

const attributesText = (attributes: Record<string, string>) =>
  Object.entries(attributes)
    .map(([name, value]) => `${name}: ${value}`)
    .join('\n');

function parseAttributes(text: string): Record<string, string> | string {
  const out: Record<string, string> = {};
  for (const line of text.split('\n').map((l) => l.trim()).filter(Boolean)) {
    const at = line.indexOf(':');
    if (at <= 0) return `“${line}” is not “name: value”`;
    out[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  }
  return out;
}

function EnrichmentEditor({ storeId, product, onSaved }: { storeId: string; product: Product; onSaved: () => void }) {
  const path = `/api/v1/admin/stores/${encodeURIComponent(storeId)}/products/${encodeURIComponent(product.productId)}/enrichment`;
  const current = useLoad(() => api<Enrichment>(path).catch((e) => (e instanceof ApiFailure && e.status === 404 ? null : Promise.reject(e))), [path]);
  const [summary, setSummary] = useState('');
  const [highlights, setHighlights] = useState('');
  const [attributes, setAttributes] = useState('');
  const [saved, setSaved] = useState('');
  // The load whose answer the fields hold (undefined: none yet; null: nothing stored).
  const [shown, setShown] = useState<Enrichment | null | undefined>(undefined);
  const action = useAction();
  // The fields take each loaded answer, and stay disabled until they hold it: Preact runs effects
  // after paint, so a field enabled when the load ended (before this effect) could take typing
  // that the effect then wipes.
  useEffect(() => {
    if (current.loading) return;
    setSummary(current.data?.summary ?? '');
    setHighlights(current.data?.highlights.join('\n') ?? '');
    setAttributes(current.data ? attributesText(current.data.attributes) : '');
    setShown(current.data);
  }, [current.data, current.loading]);
  const filling = current.loading || shown !== current.data;
  const save = async (event: Event) => {
    event.preventDefault();
    const parsed = parseAttributes(attributes);
    if (typeof parsed === 'string') return action.run(() => Promise.reject(new Error(`Attributes: ${parsed}`)));
    const body = { summary: summary.trim(), highlights: highlights.split('\n').map((h) => h.trim()).filter(Boolean), attributes: parsed };
    if (await action.run(() => api(path, { method: 'PUT', body }))) {
      setSaved('Enrichment saved: the signals now serve it.');
      onSaved();
      current.reload();
    }
  };
  const remove = async () => {
    if ((await action.run(() => api(path, { method: 'DELETE' }).then(() => true))) === true) {
      setSaved('Enrichment removed: the signals of this product are no longer served.');
      onSaved();
      current.reload();
    }
  };
  return (
    <form onSubmit={save} aria-label="Enrichment">
      {current.loading ? <Loading what="enrichment" /> : null}
      {saved ? <Notice kind="ok">{saved}</Notice> : null}
      <ErrorNotice error={current.error ?? action.error} />
      <TextArea label="Summary" value={summary} disabled={filling} onValue={setSummary} rows={3} maxLength={1000} required hint="Plain text, at most 1000 characters." />
      <TextArea label="Highlights" value={highlights} disabled={filling} onValue={setHighlights} rows={4} hint="One per line, at most 20." />
      <TextArea label="Attributes" value={attributes} disabled={filling} onValue={setAttributes} rows={4} hint="One “name: value” per line, such as “Material: recycled canvas”." />
      <div class="button-row">
        <button class="button" type="submit" disabled={filling || action.busy || summary.trim() === ''}>
          Save enrichment
        </button>
        {current.data ? (
          <button type="button" class="button danger" onClick={remove} disabled={action.busy}>
            Remove enrichment
          </button>
        ) : null}
      </div>
    </form>
  );
}

/** Why a barcode is not published as a GTIN (catalog/products.ts productWarnings), in words. */
const GTIN_REASONS: Record<string, string> = {
  invalid_characters: 'a GTIN has digits only',
  invalid_length: 'a GTIN has 8, 12, 13 or 14 digits',
  invalid_check_digit: 'its check digit does not match (a mistyped digit?)',
};

const priceText = (price: string | null, currency: string | null) => (price ? `${price}${currency ? ` ${currency}` : ''}` : '—');

/**
 * A product's SKU or GTIN for the summary: the product's own, else what its variants carry (one
 * value shared by all of them, or one each, or how many have one), pointing to the variants.
 */
function identifier(own: string | null, perVariant: (string | null)[]) {
  if (own) return own;
  const present = perVariant.filter((v): v is string => v !== null && v !== '');
  if (present.length === 0) return '—';
  if (present.length === perVariant.length && new Set(present).size === 1) return present[0]!;
  return (
    <>
      {present.length === perVariant.length ? 'One per variant' : `${present.length} of ${perVariant.length} variants have one`}: see <a href="#variants">Variants</a>
    </>
  );
}

function Warnings({ product }: { product: Product }) {
  if (product.warnings.length === 0) return null;
  const variantName = (id: string | null) => {
    const variant = product.variants.find((v) => v.variantId === id);
    return variant ? `variant ${variant.title ?? variant.sku ?? variant.variantId}` : 'the product';
  };
  return (
    <Notice kind="warn">
      <strong>Not in the published signals:</strong>
      <ul class="warnings">
        {product.warnings.map((w) => (
          <li key={w.field}>
            The barcode “{w.value}” of {variantName(w.variantId)} is not published as a GTIN: {GTIN_REASONS[w.reason] ?? w.detail}. Correct it on the platform; the next sync or webhook brings the fix.
          </li>
        ))}
      </ul>
    </Notice>
  );
}

function Variants({ product }: { product: Product }) {
  if (product.variants.length === 0) return <p class="muted">The platform sends no variants for this product.</p>;
  const invalid = new Set(product.warnings.map((w) => w.variantId));
  return (
    <DataTable
      caption={`Variants of ${product.title}`}
      columns={[{ label: 'Variant' }, { label: 'SKU' }, { label: 'GTIN' }, { label: 'Price', class: 'num' }, { label: 'Availability' }]}
      rows={product.variants.map((v) => ({
        key: v.variantId,
        header: true,
        cells: [
          v.title ?? v.variantId,
          v.sku ?? '—',
          v.gtin ?? (v.barcode ? <Badge tone={invalid.has(v.variantId) ? 'warn' : 'neutral'}>{`${v.barcode}: not a GTIN`}</Badge> : '—'),
          <>
            {priceText(v.price, product.currency)}
            {v.compareAtPrice ? <span class="muted"> (was {v.compareAtPrice})</span> : null}
          </>,
          inWords(v.availability),
        ],
      }))}
    />
  );
}

function ProductDetail({ storeId, productId, platform }: { storeId: string; productId: string; platform: string }) {
  const product = useLoad(() => api<Product>(`/api/v1/admin/stores/${encodeURIComponent(storeId)}/products/${encodeURIComponent(productId)}`), [storeId, productId]);
  const p = product.data;
  const faqs = `${BASE}/faqs?store=${encodeURIComponent(storeId)}&type=product&ref=${encodeURIComponent(productId)}`;
  return (
    <>
      <p>
        <a href={`${BASE}/catalogue?store=${storeId}`}>← All products</a>
      </p>
      <PageHeader title={p?.title ?? 'Product'} />
      <ErrorNotice error={product.error} />
      {p ? (
        <div class="detail-grid">
          <section class="card">
            <h2>Product</h2>
            <Warnings product={p} />
            <dl class="facts">
              <dt>Product id</dt>
              <dd>
                <code>{p.productId}</code>
              </dd>
              <dt>Handle</dt>
              <dd>{p.url ? <a href={p.url} target="_blank" rel="noopener">{p.handle ?? p.url}</a> : (p.handle ?? '—')}</dd>
              <dt>Price</dt>
              <dd>{p.priceMax && p.price && p.priceMax !== p.price ? `${p.price} – ${priceText(p.priceMax, p.currency)}` : priceText(p.price, p.currency)}</dd>
              <dt>Availability</dt>
              <dd>{inWords(p.availability)}</dd>
              <dt>SKU</dt>
              <dd>{identifier(p.sku, p.variants.map((v) => v.sku))}</dd>
              <dt>GTIN</dt>
              <dd>{identifier(p.gtin, p.variants.map((v) => v.gtin))}</dd>
              <dt>Brand</dt>
              <dd>{p.brand ?? '—'}</dd>
              <dt>Updated on the platform</dt>
              <dd>{formatTime(p.updatedAt)}</dd>
              <dt>Enriched</dt>
              <dd>{p.enrichedAt ? formatTime(p.enrichedAt) : <Badge tone="warn">not enriched</Badge>}</dd>
            </dl>
            <p>
              <a href={faqs}>FAQs of this product</a>
            </p>
            <h3>Signals</h3>
            <p class="field-hint">Served for enriched products of active stores.</p>
            <ul class="links">
              {SIGNALS.map(([ext, label]) => (
                <li key={ext}>
                  <a href={`/api/v1/${platform}/products/${encodeURIComponent(p.productId)}.${ext}`} target="_blank" rel="noopener">
                    {label}
                  </a>{' '}
                  <code class="muted">.{ext}</code>
                </li>
              ))}
            </ul>
          </section>
          <section class="card">
            <h2>Enrichment</h2>
            <EnrichmentEditor storeId={storeId} product={p} onSaved={product.reload} />
          </section>
          <section class="card wide" aria-labelledby="variants">
            <h2 id="variants">Variants ({p.variants.length})</h2>
            <Variants product={p} />
          </section>
        </div>
      ) : null}
    </>
  );
}

/** What the catalogue holds per store: products (webhooks and sync), categories and content pages (sync). */
const KINDS: [Kind, string][] = [
  ['products', 'Products'],
  ['categories', 'Categories'],
  ['pages', 'Pages'],
];
type Kind = 'products' | 'categories' | 'pages';

/** A store's categories (collections) or content pages as sync last read them, each with a link to its FAQs. */
function EntryList({ storeId, kind }: { storeId: string; kind: 'categories' | 'pages' }) {
  const pager = usePager();
  const entries = useLoad(() => api<Page<EntryView>>(`/api/v1/admin/stores/${encodeURIComponent(storeId)}/${kind}`, { query: { cursor: pager.cursor, limit: 25 } }), [storeId, kind, pager.cursor]);
  const type = kind === 'categories' ? 'category' : 'page';
  return (
    <>
      <ErrorNotice error={entries.error} />
      {entries.loading && !entries.data ? <Loading what={kind} /> : null}
      {entries.data && entries.data.items.length === 0 ? (
        <Empty>
          No {kind} synced for this store yet: catalogue sync reads them (see the <a href={`${BASE}/stores/${storeId}`}>store’s sync state</a>).
        </Empty>
      ) : null}
      {entries.data && entries.data.items.length > 0 ? (
        <>
          <DataTable
            card
            caption={kind === 'categories' ? 'Categories' : 'Pages'}
            columns={[{ label: kind === 'categories' ? 'Category' : 'Page' }, { label: 'Id' }, { label: 'Handle' }, { label: 'Updated' }, { label: 'FAQs' }]}
            rows={entries.data.items.map((entry) => ({
              key: entry.id,
              cells: [
                entry.url ? (
                  <a href={entry.url} target="_blank" rel="noopener">
                    {entry.title || entry.handle || entry.id}
                  </a>
                ) : (
                  entry.title || entry.handle || entry.id
                ),
                <code>{entry.id}</code>,
                entry.handle ? <code>{entry.handle}</code> : '—',
                formatTime(entry.updatedAt ?? entry.syncedAt),
                <a href={`${BASE}/faqs?store=${encodeURIComponent(storeId)}&type=${type}&ref=${encodeURIComponent(entry.id)}`} aria-label={`FAQs of ${entry.title || entry.id}`}>
                  FAQs
                </a>,
              ],
            }))}
          />
          <Pager pager={pager} nextCursor={entries.data.nextCursor} count={entries.data.items.length} />
        </>
      ) : null}
    </>
  );
}

export function Catalogue({ route, params }: PageProps) {
  const { stores, storeId, choose } = useStoreChoice(route, '/catalogue');
  const kind: Kind = KINDS.find(([id]) => id === route.query.get('kind'))?.[0] ?? 'products';
  const pager = usePager();
  const products = useLoad(
    () =>
      storeId && kind === 'products'
        ? api<Page<Product>>(`/api/v1/admin/stores/${encodeURIComponent(storeId)}/products`, { query: { cursor: pager.cursor, limit: 25 } })
        : Promise.resolve(null),
    [storeId, kind, pager.cursor],
  );
  if (params.length === 2 && stores.data) {
    const owner = stores.data.find((s) => s.id === params[0]);
    if (owner) return <ProductDetail storeId={owner.id} productId={params[1]!} platform={owner.platform} />;
  }
  return (
    <>
      <PageHeader title="Catalogue" />
      <ErrorNotice error={stores.error ?? products.error} />
      {stores.data && stores.data.length === 0 ? (
        <Empty>
          No stores yet. <a href={`${BASE}/stores`}>Connect a store</a>: its catalogue is imported, then kept in sync.
        </Empty>
      ) : null}
      {stores.data && stores.data.length > 0 ? (
        <div class="toolbar card">
          <StorePicker
            stores={stores.data}
            value={storeId}
            onValue={(id) => {
              pager.reset();
              choose(id);
            }}
          />
        </div>
      ) : null}
      {storeId ? (
        <nav class="tabs" aria-label="Catalogue kinds">
          {KINDS.map(([id, label]) => (
            <a key={id} class="tab" aria-current={kind === id ? 'page' : undefined} href={`${BASE}/catalogue?store=${encodeURIComponent(storeId)}${id === 'products' ? '' : `&kind=${id}`}`}>
              {label}
            </a>
          ))}
        </nav>
      ) : null}
      {storeId && kind !== 'products' ? <EntryList key={`${storeId}-${kind}`} storeId={storeId} kind={kind} /> : null}
      {products.data && products.data.items.length === 0 ? (
        <Empty>
          No products synced for this store yet: catalogue sync imports them, and the platform’s webhooks keep them current (see the <a href={`${BASE}/stores/${storeId}`}>store’s sync state</a>).
        </Empty>
      ) : null}
      {products.data && products.data.items.length > 0 ? (
        <>
          <DataTable
            card
            caption="Products"
            columns={[{ label: 'Product' }, { label: 'Id' }, { label: 'Price' }, { label: 'Availability' }, { label: 'Enrichment' }, { label: 'Updated' }]}
            rows={products.data.items.map((p) => ({
              key: p.productId,
              cells: [
                <a href={`${BASE}/catalogue/${storeId}/${encodeURIComponent(p.productId)}`}>{p.title}</a>,
                <code>{p.productId}</code>,
                priceText(p.price, p.currency),
                inWords(p.availability),
                p.enrichedAt ? <Badge tone="ok">enriched</Badge> : <Badge tone="warn">not enriched</Badge>,
                formatTime(p.updatedAt),
              ],
            }))}
          />
          <Pager pager={pager} nextCursor={products.data.nextCursor} count={products.data.items.length} />
        </>
      ) : null}
    </>
  );
}
