import { useEffect, useRef, useState } from 'preact/hooks';
import { api, isWidgetKey, listKeys, type ApiKey } from '../api.ts';
import type { PageProps } from '../app.tsx';
import { BASE } from '../router.ts';
import { CopyButton, ErrorNotice, Notice, PageHeader, SelectField, splitList, StorePicker, TextField, useAction, useLoad } from '../ui.tsx';
import { useStoreChoice } from './store-choice.ts';
import { explainPreview, judgePastedKey, type Explanation } from './widget-check.ts';

/** A key just created on the Keys page, handed over in memory only (never stored in the browser). */
let handedOver = '';
export function rememberWidgetKey(key: string): void {
  handedOver = key;
}

const STYLES: [string, string, string][] = [
  ['accent', 'Accent colour', '#1a56db'],
  ['bg', 'Background', '#ffffff'],
  ['fg', 'Text colour', '#1a1a1a'],
  ['border', 'Border colour', '#d9d9d9'],
  ['radius', 'Corner radius', '8px'],
  ['font', 'Font family', 'Georgia, serif'],
  ['font-size', 'Font size', '16px'],
  ['spacing', 'Spacing', '0.75em'],
];

const attribute = (name: string, value: string) => ` ${name}="${value.replaceAll('&', '&amp;').replaceAll('"', '&quot;')}"`;

/** One step: a products:read key bound to the chosen store, allowing the storefront's hosts. */
function CreateWidgetKey({ storeId, storeDomain, onCreated }: { storeId: string; storeDomain: string; onCreated: (key: ApiKey & { key: string }) => void }) {
  const [domains, setDomains] = useState('');
  const action = useAction();
  const hosts = splitList(domains);
  const create = async (event: Event) => {
    event.preventDefault();
    const body = { name: `widget ${hosts[0]}`.slice(0, 100), scopes: ['products:read'], storeId, allowedDomains: hosts };
    const created = await action.run(() => api<ApiKey & { key: string }>('/api/v1/admin/keys', { method: 'POST', body }));
    if (created) onCreated(created);
  };
  return (
    <form onSubmit={create} aria-label="Create a widget key">
      <ErrorNotice error={action.error} />
      <TextField
        label="Storefront domains"
        value={domains}
        onValue={setDomains}
        placeholder="www.example.com"
        spellcheck={false}
        hint="The hosts of the pages the widget goes on, comma-separated; *.example.com covers its subdomains."
      />
      <button class="button" type="submit" disabled={action.busy || hosts.length === 0 || !storeId}>
        Create a widget key for {storeDomain || 'the store'}
      </button>
    </form>
  );
}

export function WidgetBuilder({ baseUrl, route }: PageProps) {
  const keys = useLoad(listKeys, []);
  const { stores, storeId, store, choose } = useStoreChoice(route, '/widget');
  const [key, setKey] = useState(handedOver);
  const [created, setCreated] = useState<ApiKey | null>(null);
  const [target, setTarget] = useState('');
  const [entityType, setEntityType] = useState('');
  const [entityId, setEntityId] = useState('');
  const [previewType, setPreviewType] = useState('product');
  const [previewRef, setPreviewRef] = useState('');
  const [theme, setTheme] = useState('');
  const [styles, setStyles] = useState<Record<string, string>>({});
  const [explanation, setExplanation] = useState<Explanation | null>(null);
  const form = useRef<HTMLFormElement>(null);

  const known = [...(keys.data ?? []), ...(created && !keys.data?.some((k) => k.id === created.id) ? [created] : [])];
  const verdict = keys.data ? judgePastedKey(key, known) : null;
  const usable = verdict?.usable ? verdict.key : null;
  const otherStore = usable && usable.storeId !== storeId ? (stores.data?.find((s) => s.id === usable.storeId)?.domain ?? usable.storeId) : null;
  const accepted = usable && !otherStore ? usable : null;
  const widgetKeys = (keys.data ?? []).filter((k) => isWidgetKey(k) && k.storeId === storeId);

  // A key handed over from the Keys page (or pasted) names its store: show that store.
  const followKey = (raw: string) => {
    const verdictNow = keys.data ? judgePastedKey(raw, known) : null;
    if (verdictNow?.usable && verdictNow.key.storeId && verdictNow.key.storeId !== storeId) choose(verdictNow.key.storeId);
  };
  useEffect(() => followKey(key), [keys.data]);

  const snippet = accepted
    ? `<script src="${baseUrl}/embed.js" async` +
      attribute('data-api-key', key.trim()) +
      (target.trim() ? attribute('data-target', target.trim()) : '') +
      (entityType && entityId.trim() ? attribute('data-entity-type', entityType) + attribute('data-entity-id', entityId.trim()) : '') +
      Object.entries(styles)
        .filter(([, v]) => v.trim())
        .map(([name, v]) => attribute(`data-style-${name}`, v.trim()))
        .join('') +
      (theme ? attribute('data-style-theme', theme) : '') +
      '></script>'
    : null;
  const previewEntity = entityType && entityId.trim() ? { type: entityType, id: entityId.trim() } : { type: previewType, id: previewRef.trim() };
  const ready = accepted !== null && previewEntity.id !== '';
  const fields = JSON.stringify([key, accepted?.id, target, previewEntity, styles, theme]);

  // The preview frame gets the real /embed.js on a sample page, re-rendered shortly after each
  // change; beside it the page asks the FAQ endpoint what the widget gets, to say why it shows what it shows.
  useEffect(() => {
    setExplanation(null);
    if (!ready || !accepted) return;
    let current = true;
    const timer = setTimeout(() => {
      form.current?.requestSubmit();
      void explainPreview({ key: accepted, store, entity: previewEntity }, key.trim()).then((result) => current && setExplanation(result));
    }, 300);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [fields, ready]);

  return (
    <>
      <PageHeader title="Widget" />
      <p class="muted">
        Build the script tag for a storefront. The tag carries its key in the page source, where anyone can read it, so the key must have <code>products:read</code> and no other scope, be bound to
        the store and list the storefront’s domains.
      </p>
      <div class="widget-layout">
        <section class="card" aria-labelledby="builder">
          <h2 id="builder">Snippet</h2>
          {stores.data && stores.data.length === 0 ? (
            <Notice kind="warn">
              No store is connected yet: the widget shows a store’s FAQs. <a href={`${BASE}/stores`}>Connect a store</a> first.
            </Notice>
          ) : null}
          {stores.data && stores.data.length > 0 ? <StorePicker stores={stores.data} value={storeId} onValue={choose} /> : null}
          <fieldset class="field key-choice">
            <legend>Widget key</legend>
            <CreateWidgetKey
              storeId={storeId}
              storeDomain={store?.domain ?? ''}
              onCreated={(record) => {
                setCreated(record);
                setKey(record.key);
                keys.reload();
              }}
            />
            {created && usable?.id === created.id ? (
              <Notice kind="ok">
                Created {`“${created.name}”`} ({created.keyPrefix}…) for pages on {created.allowedDomains.join(', ')}. svc shows the key only now: it is in the script tag below.
              </Notice>
            ) : null}
            <p class="or">or use a widget key made before:</p>
            <TextField
              label="Existing widget key"
              type="password"
              autoComplete="off"
              spellcheck={false}
              value={key}
              onValue={(value) => {
                setKey(value);
                followKey(value);
              }}
              placeholder="sk_live_…"
              error={verdict && !verdict.usable ? verdict.reason : otherStore ? `This key shows the FAQs of ${otherStore}, not of ${store?.domain ?? 'the chosen store'}: choose ${otherStore} above, or create a key for this store.` : null}
              hint={
                widgetKeys.length ? (
                  <>
                    Paste the raw key (shown once when it was created). Keys of this store that fit:{' '}
                    {widgetKeys.map((k) => `${k.name || 'unnamed'} (${k.keyPrefix}…, ${k.allowedDomains.join(' ')})`).join('; ')}.
                  </>
                ) : (
                  'No key of this store fits the widget yet: create one above.'
                )
              }
            />
            {accepted ? (
              <p class="key-ok" role="status">
                Key {`“${accepted.name || 'unnamed'}”`} ({accepted.keyPrefix}…) shows the approved FAQs of {store?.domain ?? accepted.storeId} on pages of {accepted.allowedDomains.join(', ')}.
              </p>
            ) : null}
          </fieldset>
          <TextField
            label="Target (CSS selector)"
            value={target}
            onValue={setTarget}
            placeholder="right after the script tag"
            hint={
              target.trim()
                ? `The storefront page must contain an element matching ${target.trim()}, or the widget renders nothing. Leave empty to render where the snippet is pasted.`
                : 'Empty: the FAQ appears where the snippet is pasted (or in an element with data-svc-faq).'
            }
          />
          <fieldset class="field">
            <legend>Entity override (optional)</legend>
            <p class="field-hint">Without it, the widget detects the product, category or page from the storefront.</p>
            <div class="pair">
              <SelectField label="Type" value={entityType} onValue={setEntityType} options={[['', 'Detect'], ['product', 'Product'], ['category', 'Category'], ['page', 'Page']]} />
              <TextField label="Id or handle" value={entityId} onValue={setEntityId} disabled={!entityType} />
            </div>
          </fieldset>
          <fieldset class="field">
            <legend>Style</legend>
            <SelectField label="Theme" value={theme} onValue={setTheme} options={[['', 'Storefront’s own styles'], ['light', 'Light'], ['dark', 'Dark'], ['auto', 'Auto (follows the visitor)']]} />
            <div class="style-grid">
              {STYLES.map(([name, label, example]) => (
                <TextField key={name} label={label} value={styles[name] ?? ''} onValue={(v) => setStyles((s) => ({ ...s, [name]: v }))} placeholder={example} />
              ))}
            </div>
          </fieldset>
          <h3>Script tag</h3>
          {snippet ? (
            <>
              <p class="field-hint">Paste it into the storefront’s template where the FAQ should appear.</p>
              <pre>
                <code id="snippet">{snippet}</code>
              </pre>
              <CopyButton text={snippet} label="Copy snippet" target={() => document.getElementById('snippet')} />
            </>
          ) : (
            <p class="muted" id="snippet-missing">
              The script tag appears once a key the widget may use is chosen: create one above, or paste one.
            </p>
          )}
        </section>
        <section class="card" aria-labelledby="preview">
          <h2 id="preview">Live preview</h2>
          {entityType && entityId.trim() ? (
            <p class="field-hint">Showing the override’s entity.</p>
          ) : (
            <div class="pair">
              <SelectField label="Preview as" value={previewType} onValue={setPreviewType} options={[['product', 'Product'], ['category', 'Category'], ['page', 'Page']]} />
              <TextField label="Id or handle to preview" value={previewRef} onValue={setPreviewRef} placeholder="trail-runner-2" />
            </div>
          )}
          <div aria-live="polite" class="preview-explanation">
            {!accepted ? <p class="muted">The preview runs once a key the widget may use is chosen.</p> : null}
            {accepted && previewEntity.id === '' ? <p class="muted">Enter the id or handle of a {previewEntity.type} to see the widget with its approved FAQs.</p> : null}
            {ready && explanation ? (
              <Notice kind={explanation.tone}>
                {explanation.text}
                {explanation.link ? (
                  <>
                    {' '}
                    <a href={explanation.link.href}>{explanation.link.text}</a>
                  </>
                ) : null}
              </Notice>
            ) : null}
          </div>
          <form ref={form} method="post" action="/console/widget-preview" target="widget-preview" class="visually-hidden" aria-hidden="true">
            <input type="hidden" name="key" value={accepted ? key.trim() : ''} />
            <input type="hidden" name="target" value={target.trim()} />
            <input type="hidden" name="entityType" value={previewEntity.type} />
            <input type="hidden" name="entityId" value={previewEntity.id} />
            {Object.entries(styles).map(([name, v]) => (
              <input key={name} type="hidden" name={`style-${name}`} value={v.trim()} />
            ))}
            <input type="hidden" name="style-theme" value={theme} />
          </form>
          {/* A fresh frame whenever the preview stops: a refused key leaves no earlier preview behind. */}
          <iframe key={ready ? 'live' : 'idle'} name="widget-preview" title="Widget preview on a sample storefront page" class="preview-frame" src="about:blank" />
        </section>
      </div>
    </>
  );
}
