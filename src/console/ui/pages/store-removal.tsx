import { useEffect, useRef, useState } from 'preact/hooks';
import { api, type Removal, type Store, type StoreHoldings } from '../api.ts';
import { ErrorNotice, Notice, useAction } from '../ui.tsx';

// Removing a store from its page: a button that opens a modal dialog naming what svc holds for the
// store (counted by the server) and offering to disconnect it only. The dialog is the platform's own
// <dialog>: focus moves into it, Tab stays in it, Escape closes it, and focus returns to the button.

const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString()} ${n === 1 ? one : many}`;

/**
 * What svc holds for the store, in words, most telling first: what a removal deletes, what a
 * disconnect keeps. Products, FAQs, enrichments and keys always; the rest when there are any.
 */
export function holdingsInWords(counts: StoreHoldings): string[] {
  return [
    plural(counts.products, 'product'),
    plural(counts.faqs, 'FAQ'),
    plural(counts.enrichments, 'enrichment'),
    `${plural(counts.keys, 'API key')} bound to it${counts.keys > 0 ? ' (its widget stops working at once)' : ''}`,
    ...(counts.categories + counts.pages > 0 ? [`${plural(counts.categories, 'category', 'categories')} and ${plural(counts.pages, 'content page')}`] : []),
    ...(counts.deliveries + counts.orderSignals + counts.storeEvents > 0
      ? [`${plural(counts.deliveries, 'webhook delivery', 'webhook deliveries')}, ${plural(counts.orderSignals, 'order signal')} and ${plural(counts.storeEvents, 'store event')} in its logs`]
      : []),
  ];
}

/** What became of the store's webhooks at the platform, in a sentence or two. */
export function hooksInWords(hooks: Removal['hooks']): string {
  if (hooks.outcome === 'failed') {
    return `The platform did not confirm that svc's webhooks are deleted (${hooks.error}): remove those that deliver to ${hooks.deliveryUrl} in the platform's admin${hooks.left.length ? ` (${hooks.left.join(', ')})` : ''}.`;
  }
  if (hooks.outcome === 'unregistered') return hooks.removed.length ? `svc deleted its webhooks at the platform (${hooks.removed.join(', ')}).` : 'The platform had none of svc’s webhooks left for it.';
  return `${hooks.detail.charAt(0).toUpperCase()}${hooks.detail.slice(1)}.`;
}

/** The answer of a removal, for the store list to show once the store's page is gone. */
export function RemovalNotice({ removal, domain }: { removal: Removal; domain: string }) {
  const kind = removal.hooks.outcome === 'failed' ? 'warn' : 'ok';
  return (
    <Notice kind={kind}>
      {removal.keptData ? `Disconnected ${domain}; its data is kept. ` : `Removed ${domain}: ${holdingsInWords(removal.removed).join(', ')}. `}
      {hooksInWords(removal.hooks)}
    </Notice>
  );
}

type Choice = 'remove' | 'disconnect';

/**
 * "Remove store…" and its confirmation dialog. `onDone` gets the server's answer (the store is
 * gone, or disconnected with its data kept).
 */
export function RemoveStore({ store, onDone }: { store: Store; onDone: (removal: Removal) => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const opener = useRef<HTMLButtonElement>(null);
  // Each "Remove store…" asks for the dialog once more; the dialog itself says whether it is open.
  // (A copy of that in state went stale: the close event of an Escape arrives a task later, and a
  // quick Enter on the button in between was undone by it, leaving the dialog shut.)
  const [opened, setOpened] = useState(0);
  const [counts, setCounts] = useState<StoreHoldings | null>(null);
  const [choice, setChoice] = useState<Choice>('remove');
  const counting = useAction();
  const action = useAction();
  const disconnected = store.status === 'inactive' && store.disconnectedAt !== null;

  useEffect(() => {
    // After the render that reset the dialog's content, so it never shows the last opening's.
    if (opened > 0 && !dialog.current?.open) dialog.current?.showModal();
  }, [opened]);

  const show = async () => {
    setChoice('remove');
    setCounts(null);
    action.clear();
    setOpened((n) => n + 1);
    const answer = await counting.run(() => api<{ counts: StoreHoldings }>(`/api/v1/admin/stores/${encodeURIComponent(store.id)}/data`));
    if (answer) setCounts(answer.counts);
  };
  // Focus goes back to the button (it does nothing while a new opening's modal dialog is up).
  const closed = () => opener.current?.focus();
  const confirm = async () => {
    const query = choice === 'disconnect' ? '?keepData=true' : '';
    const removal = await action.run(() => api<Removal>(`/api/v1/admin/stores/${encodeURIComponent(store.id)}${query}`, { method: 'DELETE' }));
    if (!removal) return;
    dialog.current?.close();
    onDone(removal);
  };
  const titleId = `remove-${store.id}`;
  return (
    <section class="card danger-zone" aria-labelledby={`${titleId}-section`}>
      <h2 id={`${titleId}-section`}>Remove this store</h2>
      <p class="muted">
        {disconnected
          ? 'The store is disconnected and its data kept. Removing it deletes that data too.'
          : 'Delete its webhooks at the platform, stop its sync, and delete everything svc holds for it, or only disconnect it and keep its data.'}
      </p>
      <button type="button" class="button danger" ref={opener} onClick={show}>
        Remove store…
      </button>
      {/* While the removal runs, Escape does not close the dialog: its answer is on the way. */}
      <dialog ref={dialog} class="dialog" aria-labelledby={titleId} aria-describedby={`${titleId}-what`} onClose={closed} onCancel={(event) => action.busy && event.preventDefault()}>
        <h2 id={titleId}>Remove {store.domain}?</h2>
        <div id={`${titleId}-what`}>
          {counts ? (
            <>
              <p>svc holds for this store:</p>
              <ul class="holdings">
                {holdingsInWords(counts).map((line) => (
                  <li key={line}>{line}</li>
                ))}
              </ul>
            </>
          ) : counting.error ? null : (
            <p class="muted" role="status">
              Counting what svc holds for this store…
            </p>
          )}
        </div>
        <ErrorNotice error={counting.error} />
        <fieldset>
          <legend>What should happen?</legend>
          <label class="check">
            <input type="radio" name={`${titleId}-choice`} value="remove" checked={choice === 'remove'} onChange={() => setChoice('remove')} />
            <span>
              Remove the store and delete all of this <span class="muted">svc deletes its webhooks at the platform and stops the store’s sync and jobs. This cannot be undone.</span>
            </span>
          </label>
          <label class="check">
            <input type="radio" name={`${titleId}-choice`} value="disconnect" checked={choice === 'disconnect'} onChange={() => setChoice('disconnect')} />
            <span>
              Disconnect only, keep the data <span class="muted">No webhooks, no sync, signals and widget withdrawn; saving credentials again reconnects it.</span>
            </span>
          </label>
        </fieldset>
        <ErrorNotice error={action.error} />
        {action.busy ? (
          <p class="muted" role="status">
            {choice === 'remove' ? 'Removing' : 'Disconnecting'}: asking the platform to delete svc’s webhooks (10 seconds at most)…
          </p>
        ) : null}
        <div class="button-row">
          <button type="button" class="button danger" onClick={confirm} disabled={action.busy || (choice === 'remove' && counts === null)}>
            {choice === 'remove' ? 'Remove store and data' : 'Disconnect store'}
          </button>
          <button type="button" class="button secondary" autoFocus onClick={() => dialog.current?.close()} disabled={action.busy}>
            Cancel
          </button>
        </div>
      </dialog>
    </section>
  );
}
