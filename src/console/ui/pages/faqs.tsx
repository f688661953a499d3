import { useEffect, useRef, useState } from 'preact/hooks';
import { renderAccordion } from '../../../../widget/render.ts';
import type { FaqView } from '../../../faqs/store.ts';
import { api, type Page } from '../api.ts';
import type { PageProps } from '../app.tsx';
import { BASE } from '../router.ts';
import { Badge, ConfirmButton, Empty, ErrorNotice, formatTime, Loading, PageHeader, Pager, SelectField, StorePicker, TextArea, TextField, useAction, useLoad, usePager } from '../ui.tsx';
import { useStoreChoice } from './store-choice.ts';
import { inWords } from '../words.ts';

type Faq = FaqView;
type Named = { ref: string; id: string; handle: string | null; title: string; url: string | null };
/** Titles of the entities FAQs are filed under, by `type:ref`. */
type Titles = Map<string, Named>;
const titleKey = (type: string, ref: string) => `${type}:${ref}`;

/**
 * The titles of the entities `faqs` are filed under: one request per entity type present
 * (GET .../titles), not one per FAQ.
 */
function useTitles(storeId: string, faqs: { entityType: string; entityRef: string }[] | null): Titles {
  const wanted = new Map<string, Set<string>>();
  for (const faq of faqs ?? []) wanted.set(faq.entityType, (wanted.get(faq.entityType) ?? new Set()).add(faq.entityRef));
  const key = JSON.stringify([...wanted].map(([type, refs]) => [type, [...refs].sort()]).sort());
  const titles = useLoad(async () => {
    const found: Titles = new Map();
    await Promise.all(
      [...wanted].map(async ([type, refs]) => {
        const query = new URLSearchParams([['type', type], ...[...refs].map((ref): [string, string] => ['ref', ref])]);
        const named = await api<{ items: Named[] }>(`/api/v1/admin/stores/${encodeURIComponent(storeId)}/titles?${query}`);
        for (const item of named.items) found.set(titleKey(type, item.ref), item);
      }),
    );
    return found;
  }, [storeId, key]);
  return titles.data ?? new Map();
}

/** An entity as a person knows it: "Product “Waxed Canvas Tote”", else its type and reference while no title is known. */
function EntityName({ type, entityRef, titles }: { type: string; entityRef: string; titles: Titles }) {
  const named = titles.get(titleKey(type, entityRef));
  return named ? (
    <>
      {inWords(type)} “{named.title}” <code class="muted">{entityRef}</code>
    </>
  ) : (
    <>
      {inWords(type)} <code>{entityRef}</code>
    </>
  );
}

const STATUS_TONE = { pending: 'warn', approved: 'ok', rejected: 'danger' } as const;
const ENTITY_TYPES: [string, string][] = [
  ['product', 'Product'],
  ['category', 'Category'],
  ['page', 'Page'],
];

/** The answer as shoppers will see it: rendered by the widget's own accordion and sanitiser. */
export function FaqPreview({ entries, open = true }: { entries: { id?: string; question: string; answer: string }[]; open?: boolean }) {
  const holder = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = holder.current!;
    renderAccordion(document, element, entries.map((e, i) => ({ id: e.id ?? String(i), question: e.question, answer: e.answer })));
    if (open) element.querySelectorAll('details').forEach((d) => (d.open = true));
  }, [JSON.stringify(entries), open]);
  return <div class="faq-preview" ref={holder} data-theme="auto" />;
}

function FaqCard({ faq, onChanged, titles }: { faq: Faq; onChanged: () => void; titles: Titles }) {
  const [editing, setEditing] = useState(false);
  const [question, setQuestion] = useState(faq.question);
  const [answer, setAnswer] = useState(faq.answer);
  const action = useAction();
  const patch = async (body: Partial<Faq>) => {
    if (await action.run(() => api(`/api/v1/admin/faqs/${faq.id}`, { method: 'PATCH', body }))) {
      setEditing(false);
      onChanged();
    }
  };
  const remove = async () => {
    await action.run(() => api(`/api/v1/admin/faqs/${faq.id}`, { method: 'DELETE' }));
    onChanged();
  };
  return (
    <article class="card faq" aria-label={faq.question}>
      <header class="faq-head">
        <Badge tone={STATUS_TONE[faq.status]}>{faq.status}</Badge>
        <span>
          <a href={`${BASE}/faqs?store=${encodeURIComponent(faq.storeId)}&type=${faq.entityType}&ref=${encodeURIComponent(faq.entityRef)}`}>
            <EntityName type={faq.entityType} entityRef={faq.entityRef} titles={titles} />
          </a>
          <span class="muted"> · {formatTime(faq.createdAt)}</span>
        </span>
      </header>
      <ErrorNotice error={action.error} />
      {editing ? (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void patch({ question, answer });
          }}
        >
          <TextField label="Question" value={question} onValue={setQuestion} maxLength={500} required />
          <TextArea label="Answer" value={answer} onValue={setAnswer} rows={5} hint="Basic HTML: p, br, ul, ol, li, strong, em and links; anything else is removed." />
          <p class="field-hint">Preview</p>
          <FaqPreview entries={[{ question, answer }]} />
          <div class="button-row">
            <button class="button" type="submit" disabled={action.busy}>
              Save
            </button>
            <button class="button secondary" type="button" onClick={() => setEditing(false)}>
              Cancel
            </button>
          </div>
        </form>
      ) : (
        <FaqPreview entries={[faq]} />
      )}
      {editing ? null : (
        <div class="button-row">
          {faq.status !== 'approved' ? (
            <button class="button small" type="button" disabled={action.busy} onClick={() => patch({ status: 'approved' })}>
              Approve
            </button>
          ) : null}
          {faq.status !== 'rejected' ? (
            <button class="button secondary small" type="button" disabled={action.busy} onClick={() => patch({ status: 'rejected' })}>
              Reject
            </button>
          ) : null}
          <button class="button secondary small" type="button" onClick={() => setEditing(true)}>
            Edit
          </button>
          <ConfirmButton label="Delete" confirm="Delete this FAQ" onConfirm={remove} disabled={action.busy} />
        </div>
      )}
    </article>
  );
}

/** A store's FAQs, newest first: the moderation queue (`pending`), or all of them (of one status, or any). */
function StoreList({ storeId, status, title, queue, onAddFirst }: { storeId: string; status: string; title: string; queue: boolean; onAddFirst: () => void }) {
  const pager = usePager();
  const list = useLoad(() => api<Page<Faq>>('/api/v1/admin/faqs', { query: { storeId, status, cursor: pager.cursor, limit: 20 } }), [storeId, status, pager.cursor]);
  const titles = useTitles(storeId, list.data?.items ?? null);
  // An empty list of one status says whether the store has FAQs at all.
  const none = list.data !== null && list.data.items.length === 0 && pager.page === 1;
  const anyFaq = useLoad(() => (none && status ? api<Page<Faq>>('/api/v1/admin/faqs', { query: { storeId, limit: 1 } }).then((p) => p.items.length > 0) : Promise.resolve(!none)), [storeId, status, none]);
  return (
    <section aria-label={title}>
      <ErrorNotice error={list.error} />
      {list.loading && !list.data ? <Loading what="FAQs" /> : null}
      {none && anyFaq.data === false ? (
        <Empty>
          This store has no FAQs yet. Add the first one to a product, category or page:{' '}
          <button type="button" class="button secondary small" onClick={onAddFirst}>
            Add an FAQ
          </button>
        </Empty>
      ) : null}
      {none && anyFaq.data === true ? <Empty>{queue ? 'Nothing waiting: every FAQ of this store has been moderated.' : `No ${status} FAQs in this store.`}</Empty> : null}
      {list.data?.items.map((faq) => <FaqCard key={faq.id + faq.updatedAt} faq={faq} onChanged={list.reload} titles={titles} />)}
      {list.data && (list.data.nextCursor || pager.page > 1) ? <Pager pager={pager} nextCursor={list.data.nextCursor} count={list.data.items.length} /> : null}
    </section>
  );
}

type Entity = { entityType: string; entityRef: string };

/** One entity's FAQs; `initial` (from a link such as the catalogue's) is shown at once. */
function EntityList({ storeId, initial }: { storeId: string; initial: Entity | null }) {
  const [entityType, setEntityType] = useState(initial?.entityType ?? 'product');
  const [entityRef, setEntityRef] = useState(initial?.entityRef ?? '');
  const [shown, setShown] = useState<Entity | null>(initial);
  const list = useLoad(
    () => (shown ? api<Page<Faq>>('/api/v1/admin/faqs', { query: { storeId, ...shown } }).then((p) => p.items) : Promise.resolve(null)),
    [storeId, JSON.stringify(shown)],
  );
  const [question, setQuestion] = useState('');
  const [answer, setAnswer] = useState('');
  const action = useAction();
  const add = async (event: Event) => {
    event.preventDefault();
    if (!shown) return;
    const created = await action.run(() => api('/api/v1/admin/faqs', { method: 'POST', body: { storeId, ...shown, question, answer, status: 'approved' } }));
    if (created) {
      setQuestion('');
      setAnswer('');
      list.reload();
    }
  };
  const approved = (list.data ?? []).filter((f) => f.status === 'approved');
  const titles = useTitles(storeId, shown ? [shown] : null);
  return (
    <section aria-label="By entity">
      <form
        class="toolbar card"
        onSubmit={(e) => {
          e.preventDefault();
          setShown({ entityType, entityRef: entityRef.trim() });
        }}
      >
        <SelectField label="Entity type" value={entityType} onValue={setEntityType} options={ENTITY_TYPES} />
        <TextField label={`${ENTITY_TYPES.find(([id]) => id === entityType)?.[1] ?? 'Entity'} id, handle or slug`} value={entityRef} onValue={setEntityRef} required />
        <div class="filter-actions">
          <button class="button" type="submit" disabled={entityRef.trim() === ''}>
            Show FAQs
          </button>
        </div>
      </form>
      <ErrorNotice error={list.error} />
      {shown && list.data ? (
        <>
          <h2>
            <EntityName type={shown.entityType} entityRef={shown.entityRef} titles={titles} />: {list.data.length === 1 ? '1 FAQ' : `${list.data.length} FAQs`}
          </h2>
          {list.data.length === 0 ? <p class="muted">No FAQs for this {shown.entityType} yet: add the first one below. It is shown by the widget at once (added as approved).</p> : null}
          {approved.length > 0 ? (
            <section class="card">
              <h3>What the widget shows ({approved.length} approved, in display order)</h3>
              <FaqPreview entries={approved} open={false} />
            </section>
          ) : null}
          {list.data.map((faq) => (
            <FaqCard key={faq.id + faq.updatedAt} faq={faq} onChanged={list.reload} titles={titles} />
          ))}
          <form class="card" onSubmit={add} aria-label="Add an FAQ">
            <h3>Add an FAQ to this {shown.entityType}</h3>
            <ErrorNotice error={action.error} />
            <TextField label="Question" value={question} onValue={setQuestion} maxLength={500} required />
            <TextArea label="Answer" value={answer} onValue={setAnswer} rows={4} />
            <button class="button" type="submit" disabled={action.busy || !question.trim() || !answer.trim()}>
              Add as approved
            </button>
          </form>
        </>
      ) : null}
    </section>
  );
}

const TABS: [string, string][] = [
  ['queue', 'Moderation queue'],
  ['all', 'All entries'],
  ['entity', 'By entity'],
];

/** `?type=&ref=` (a link to one entity's FAQs) when both name something the API takes. */
function linkedEntity(query: URLSearchParams): Entity | null {
  const entityType = query.get('type') ?? '';
  const entityRef = query.get('ref')?.trim() ?? '';
  return ENTITY_TYPES.some(([id]) => id === entityType) && entityRef !== '' ? { entityType, entityRef } : null;
}

export function Faqs({ route }: PageProps) {
  const { stores, storeId, choose } = useStoreChoice(route, '/faqs');
  const linked = linkedEntity(route.query);
  const [tab, setTab] = useState(linked ? 'entity' : 'queue');
  const [status, setStatus] = useState('');
  return (
    <>
      <PageHeader title="FAQs" />
      <ErrorNotice error={stores.error} />
      {stores.data && stores.data.length === 0 ? (
        <Empty>
          FAQs belong to a store. <a href={`${BASE}/stores`}>Connect a store</a> first.
        </Empty>
      ) : null}
      {stores.data && storeId ? (
        <>
          <div class="toolbar card">
            <StorePicker stores={stores.data} value={storeId} onValue={choose} />
          </div>
          <div class="tabs" role="tablist" aria-label="FAQ views">
            {TABS.map(([id, label]) => (
              <button key={id} type="button" role="tab" id={`tab-${id}`} aria-selected={tab === id} aria-controls="faq-panel" class="tab" onClick={() => setTab(id)}>
                {label}
              </button>
            ))}
          </div>
          <div id="faq-panel" role="tabpanel" aria-labelledby={`tab-${tab}`}>
            {tab === 'queue' ? <StoreList key={`q-${storeId}`} storeId={storeId} status="pending" title="Pending FAQs" queue onAddFirst={() => setTab('entity')} /> : null}
            {tab === 'all' ? (
              <>
                <div class="toolbar">
                  <SelectField label="Status" value={status} onValue={setStatus} options={[['', 'Any'], ['pending', 'Pending'], ['approved', 'Approved'], ['rejected', 'Rejected']]} />
                </div>
                <StoreList key={`a-${storeId}-${status}`} storeId={storeId} status={status} title="All FAQs" queue={false} onAddFirst={() => setTab('entity')} />
              </>
            ) : null}
            {tab === 'entity' ? <EntityList key={`e-${storeId}`} storeId={storeId} initial={linked} /> : null}
          </div>
        </>
      ) : null}
    </>
  );
}
