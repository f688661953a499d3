import { useEffect, useRef, useState } from 'preact/hooks';
import { isWidgetKey, listKeys, listStores } from '../api.ts';
import type { PageProps } from '../app.tsx';
import { CopyButton, PageHeader, SelectField, TextField, useLoad } from '../ui.tsx';

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

export function WidgetBuilder({ baseUrl }: PageProps) {
  const keys = useLoad(listKeys, []);
  const stores = useLoad(listStores, []);
  const [key, setKey] = useState(handedOver);
  const [target, setTarget] = useState('#svc-faq');
  const [entityType, setEntityType] = useState('');
  const [entityId, setEntityId] = useState('');
  const [previewType, setPreviewType] = useState('product');
  const [previewRef, setPreviewRef] = useState('');
  const [theme, setTheme] = useState('');
  const [styles, setStyles] = useState<Record<string, string>>({});
  const form = useRef<HTMLFormElement>(null);

  const widgetKeys = (keys.data ?? []).filter((k) => !k.revokedAt && isWidgetKey(k));
  const storeDomain = (id: string | null) => stores.data?.find((s) => s.id === id)?.domain ?? id;
  const snippet =
    `<script src="${baseUrl}/embed.js" async` +
    attribute('data-api-key', key.trim() || 'sk_live_…') +
    (target.trim() ? attribute('data-target', target.trim()) : '') +
    (entityType && entityId.trim() ? attribute('data-entity-type', entityType) + attribute('data-entity-id', entityId.trim()) : '') +
    Object.entries(styles)
      .filter(([, v]) => v.trim())
      .map(([name, v]) => attribute(`data-style-${name}`, v.trim()))
      .join('') +
    (theme ? attribute('data-style-theme', theme) : '') +
    '></script>';
  const previewEntity = entityType && entityId.trim() ? { type: entityType, id: entityId.trim() } : { type: previewType, id: previewRef.trim() };
  const ready = key.trim().startsWith('sk_live_') && previewEntity.id !== '';
  const fields = JSON.stringify([key, target, previewEntity, styles, theme]);

  // The preview frame gets the real /embed.js on a sample page, re-rendered shortly after each change.
  useEffect(() => {
    if (!ready) return;
    const timer = setTimeout(() => form.current?.requestSubmit(), 300);
    return () => clearTimeout(timer);
  }, [fields, ready]);

  return (
    <>
      <PageHeader title="Widget" />
      <p class="muted">
        Build the script tag for a storefront. The key must have <code>products:read</code> and no other scope (it sits in the page source), be bound to the store and list the storefront’s domain.
      </p>
      <div class="widget-layout">
        <section class="card" aria-labelledby="builder">
          <h2 id="builder">Snippet</h2>
          <TextField
            label="Widget key"
            type="password"
            autoComplete="off"
            spellcheck={false}
            value={key}
            onValue={setKey}
            placeholder="sk_live_…"
            hint={
              widgetKeys.length ? (
                <>
                  Paste the raw key (shown once when it was created). Suitable keys:{' '}
                  {widgetKeys.map((k) => `${k.name || 'unnamed'} (${k.keyPrefix}…, ${storeDomain(k.storeId)}, ${k.allowedDomains.join(' ')})`).join('; ')}.
                </>
              ) : (
                'No key is ready for the widget yet: create one on the Keys page with products:read, a store and allowed domains.'
              )
            }
          />
          <TextField label="Target (CSS selector)" value={target} onValue={setTarget} hint="Where the FAQ goes. Empty: an element with data-svc-faq, else right after the script tag." />
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
          <pre>
            <code id="snippet">{snippet}</code>
          </pre>
          <CopyButton text={snippet} label="Copy snippet" target={() => document.getElementById('snippet')} />
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
          {ready ? null : <p class="muted">Enter the key and an entity to see the widget with its approved FAQs.</p>}
          <form ref={form} method="post" action="/console/widget-preview" target="widget-preview" class="visually-hidden" aria-hidden="true">
            <input type="hidden" name="key" value={key.trim()} />
            <input type="hidden" name="target" value={target.trim()} />
            <input type="hidden" name="entityType" value={previewEntity.type} />
            <input type="hidden" name="entityId" value={previewEntity.id} />
            {Object.entries(styles).map(([name, v]) => (
              <input key={name} type="hidden" name={`style-${name}`} value={v.trim()} />
            ))}
            <input type="hidden" name="style-theme" value={theme} />
          </form>
          <iframe name="widget-preview" title="Widget preview on a sample storefront page" class="preview-frame" src="about:blank" />
        </section>
      </div>
    </>
  );
}
