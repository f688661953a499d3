import { t } from 'elysia';
import { PLATFORMS } from './types.ts';
import { apiDoc, integer, jsonBodyFailures, isoTime, nullable, type Failure } from '../lib/api-doc.ts';
import { ITEM_CONDITIONS } from './settings.ts';

// OpenAPI descriptions of the store routes (src/stores/routes.ts).

const settings = t.Object(
  {
    itemCondition: t.Optional(t.String({ enum: [...ITEM_CONDITIONS] })),
    returnPolicy: t.Optional(t.Object({ countries: t.Array(t.String()), window: t.String() }, { additionalProperties: true })),
    shipping: t.Optional(t.Array(t.Object({ countries: t.Array(t.String()), price: t.String() }, { additionalProperties: true }))),
  },
  { additionalProperties: false, description: 'Merchant-listing facts published on every offer (docs/signals.md); `{}` until set' },
);

const store = t.Object(
  {
    id: t.String(),
    platform: t.String({ enum: [...PLATFORMS] }),
    domain: t.String(),
    currency: nullable(t.String()),
    status: t.String({ enum: ['active', 'inactive'] }),
    credentialKind: t.String(),
    hooks: t.Object({
      status: t.String({
        enum: ['pending', 'registering', 'registered', 'failed', 'not_required', 'platform_managed', 'unregistered', 'unregister_failed'],
        description: '`registering`: svc is registering them in the background (the answer came before the platform did); `unregistered`: svc deleted them when the store was disconnected; `unregister_failed`: it could not (`topics` may be left, `error` says why)',
      }),
      topics: t.Array(t.String()),
      error: nullable(t.String()),
      registeredAt: nullable(isoTime()),
      confirmedAt: nullable(isoTime()),
    }),
    createdAt: isoTime(),
    updatedAt: isoTime(),
    deactivatedAt: nullable(isoTime()),
    signalsWithdrawnAt: nullable(isoTime()),
    disconnectedAt: nullable(isoTime('When the operator disconnected the store, keeping its data (`DELETE ...?keepData=true`); null once credentials are saved again')),
    settings,
    webhookUrl: t.String({ description: 'Where the platform delivers this store’s webhooks' }),
    sync: t.Object(
      {
        state: t.String({ enum: ['idle', 'running', 'paused', 'failed'], description: '`paused`: the operator paused it, nothing runs until it is resumed' }),
        trigger: nullable(t.String({ enum: ['connect', 'credentials', 'manual', 'schedule'] })),
        startedAt: nullable(isoTime()),
        finishedAt: nullable(isoTime()),
        lastCompletedAt: nullable(isoTime()),
        error: nullable(t.String()),
        retry: nullable(
          t.Object(
            { failedAttempts: integer(), maxAttempts: integer(), nextAttemptAt: isoTime() },
            { description: 'A page being retried with backoff: the attempts that failed, how many it gets, and when the next is due' },
          ),
        ),
        failedPasses: integer({ description: 'Passes in a row that failed; the schedule waits twice as long after each (up to a week)' }),
        nextScheduledAt: nullable(isoTime('When the schedule starts the next pass; null while one runs, while paused, or without a schedule')),
        pausedAt: nullable(isoTime('When the operator paused the sync; null while it runs as usual')),
        kinds: t.Record(t.String(), t.Object({ state: t.String(), pages: t.Integer(), items: t.Integer(), error: nullable(t.String()), lastCompletedAt: nullable(isoTime()) })),
      },
      { description: 'The catalogue sync (docs/sync.md)' },
    ),
    currencyError: t.Optional(t.String({ description: 'Why the currency could not be read from the platform (the store is saved)' })),
  },
  { additionalProperties: true },
);

const storeExample = {
  id: 'st_01JD8M1N2P3Q4R5S6T7V8W9X0Y',
  platform: 'platform-a',
  domain: 'shop.example.com',
  currency: 'EUR',
  status: 'active',
  credentialKind: 'access_token',
  hooks: { status: 'registered', topics: ['products/update'], error: null, registeredAt: '2026-11-23T10:00:01.000Z', confirmedAt: null },
  createdAt: '2026-11-23T10:00:00.000Z',
  updatedAt: '2026-11-23T10:00:01.000Z',
  deactivatedAt: null,
  signalsWithdrawnAt: null,
  disconnectedAt: null,
  settings: {},
  webhookUrl: 'https://svc.example.com/api/v1/platform-a/webhooks',
  sync: {
    state: 'idle',
    trigger: 'connect',
    startedAt: '2026-11-23T10:00:01.000Z',
    finishedAt: '2026-11-23T10:02:40.000Z',
    lastCompletedAt: '2026-11-23T10:02:40.000Z',
    error: null,
    retry: null,
    failedPasses: 0,
    nextScheduledAt: '2026-11-24T10:00:01.000Z',
    pausedAt: null,
    kinds: { products: { state: 'idle', pages: 120, items: 1200, error: null, lastCompletedAt: '2026-11-23T10:02:40.000Z' } },
  },
};

const holdings = t.Object(
  {
    products: integer({ description: 'Live products (their variants, and the tombstones of removed ones, go with them)' }),
    enrichments: integer(),
    faqs: integer(),
    categories: integer(),
    pages: integer(),
    deliveries: integer({ description: 'Rows of the webhook delivery log' }),
    orderSignals: integer(),
    storeEvents: integer(),
    keys: integer({ description: 'API keys bound to the store (its widget keys)' }),
  },
  { additionalProperties: false },
);
const holdingsExample = { products: 1200, enrichments: 40, faqs: 85, categories: 14, pages: 6, deliveries: 5210, orderSignals: 310, storeEvents: 2, keys: 1 };

const hookRemoval = t.Object({
  outcome: t.String({
    enum: ['unregistered', 'failed', 'none', 'platform_managed'],
    description: '`unregistered`: svc deleted its webhooks at the platform; `failed`: the platform did not confirm every deletion in time (`left`, `error`: remove them by hand); `none`: svc had registered none; `platform_managed`: svc’s platform-A app, whose hooks go with the app',
  }),
  removed: t.Array(t.String(), { description: 'Topics whose hooks the platform confirmed deleted' }),
  left: t.Array(t.String(), { description: 'Topics whose hooks may still be there' }),
  error: nullable(t.String()),
  deliveryUrl: t.String({ description: 'Where those hooks deliver: how to find them in the platform’s admin' }),
  detail: t.String({ description: 'What to know or do, in a sentence' }),
});
const removal = t.Object({
  id: t.String(),
  keptData: t.Boolean(),
  removed: t.Object({ ...holdings.properties, jobs: integer({ description: 'Unfinished jobs dropped (those running stopped first)' }) }, { description: 'What was deleted (all zero but `jobs` for a disconnect)' }),
  kept: nullable(holdings),
  hooks: hookRemoval,
  store: nullable(store),
});
const deliveryUrl = 'https://svc.example.com/api/v1/webhooks/platform-a';
const removalExample = {
  id: storeExample.id,
  keptData: false,
  removed: { ...holdingsExample, jobs: 1 },
  kept: null,
  hooks: { outcome: 'unregistered', removed: ['products/create', 'products/update', 'products/delete', 'app/uninstalled'], left: [], error: null, deliveryUrl, detail: 'svc deleted its webhooks at the platform' },
  store: null,
};

const body = jsonBodyFailures('credentials: Expected object');
const notFound: Failure = [404, 'not_found', 'no store with id "st_unknown"'];
const conflict: Failure = [409, 'store_exists', 'another store of this platform already uses this shop domain, store hash or site URL'];
const credentials: Failure = [400, 'invalid_credentials', 'credentials.accessToken: required for platform-a'];
const privateTarget: Failure = [
  400,
  'private_target',
  'credentials.siteUrl: 169.254.169.254 is a cloud metadata address; svc connects to public internet addresses only, unless the operator sets SVC_ALLOW_PRIVATE_TARGETS=1 (for stores on svc\'s own network)',
];
/** How a request that connects a store answers (stores/admin.ts). */
const connection =
  'The connection runs in the background: the answer comes once it is done, or after 5 s at most with `hooks.status: "registering"` (the store record shows the outcome when it is known).';
const one = (description: string) => ({ 200: { description, schema: store, example: storeExample } });

export const storeDocs = {
  create: apiDoc({
    summary: 'Connect a store',
    description: `Saves the store and its credentials (encrypted at rest), then registers its webhooks on the platform and reads its currency; failures there are reported in \`hooks\` and \`currencyError\`, the store stays saved. ${connection} A site URL (platform C) or shop domain (platform A without SVC_PLATFORM_A_API_BASE) that is or resolves to a loopback, private, link-local or metadata address is refused. docs/webhooks.md lists each platform’s credentials.`,
    tag: 'stores',
    auth: 'admin',
    responses: { 201: { description: 'The new store', schema: store, example: storeExample } },
    errors: [...body, credentials, [400, 'invalid_domain', 'domain "shop example" is not a host name'], privateTarget, conflict],
    bodyExample: { platform: 'platform-a', domain: 'shop.example.com', credentials: { accessToken: 'pa_token_example' } },
  }),
  list: apiDoc({ summary: 'List stores', tag: 'stores', auth: 'admin', responses: { 200: { description: 'Every store', schema: t.Object({ items: t.Array(store) }), example: { items: [storeExample] } } } }),
  get: apiDoc({ summary: 'Get a store', tag: 'stores', auth: 'admin', responses: one('The store'), errors: [notFound] }),
  saveCredentials: apiDoc({
    summary: 'Replace a store’s credentials',
    description: `Then registers its webhooks again and starts a catalogue import. \`currency\` (ISO 4217), when given, replaces the store’s currency; otherwise svc reads it from the platform if it is not known yet (a store of svc’s platform-A app can only get it this way or at creation). ${connection}`,
    tag: 'stores',
    auth: 'admin',
    responses: one('The store after registering its webhooks'),
    errors: [...body, credentials, privateTarget, notFound, conflict],
    bodyExample: { credentials: { accessToken: 'pa_token_example' }, currency: 'EUR' },
  }),
  sync: apiDoc({
    summary: 'Sync a store’s catalogue now',
    description:
      'Starts a catalogue sync pass (unless one is running) that imports every product and, once complete, removes products the platform no longer lists. A pass waiting for its next attempt after failures is left to wait (`sync.retry` says when). Answers at once; follow `sync` on the store.',
    tag: 'stores',
    auth: 'admin',
    responses: { 202: { description: 'The store with its sync state', schema: store, example: { ...storeExample, sync: { ...storeExample.sync, state: 'running', trigger: 'manual', finishedAt: null, nextScheduledAt: null } } } },
    errors: [notFound, [409, 'sync_paused', 'the catalogue sync of store st_01JD8M1N2P3Q4R5S6T7V8W9X0Y is paused: resume it first (POST /api/v1/admin/stores/st_01JD8M1N2P3Q4R5S6T7V8W9X0Y/sync/resume, svc stores sync-resume st_01JD8M1N2P3Q4R5S6T7V8W9X0Y)']],
  }),
  remove: apiDoc({
    summary: 'Remove a store (or disconnect it)',
    description:
      'First the store goes inactive with its signals withdrawn (its widget keys stop working, deliveries are ignored), its sync passes end and its jobs stop (running ones aborted, queued ones dropped). ' +
      'Then svc deletes the webhooks it registered at the platform, giving the platform 10 s: what it did not confirm is in `hooks.left` with the reason, for you to remove by hand (the removal never waits longer). ' +
      'Last, in one transaction, everything svc holds for the store is deleted: catalogue, enrichment, FAQs, sync state, delivery log, order signals, store events and the API keys bound to it; deliveries for it are refused from then on. ' +
      'With `keepData=true` the store is only disconnected: no hooks, no sync, signals withdrawn, data kept; `PUT .../credentials` reconnects it.',
    tag: 'stores',
    auth: 'admin',
    inputs: [{ name: 'keepData', in: 'query', description: '`true`: disconnect only, keeping the store and its data', schema: t.Boolean() }],
    responses: {
      200: { description: 'What was removed (counts) and what became of the webhooks; with keepData, what was kept and the disconnected store', schema: removal, example: removalExample },
    },
    errors: [[400, 'invalid_query', 'keepData: expected true or false'], notFound, [409, 'store_being_removed', 'store st_01JD8M1N2P3Q4R5S6T7V8W9X0Y is being removed or disconnected; try again once that has answered']],
  }),
  holdings: apiDoc({
    summary: 'Count what svc holds for a store',
    description: 'What a removal would delete (the console names it before asking to confirm).',
    tag: 'stores',
    auth: 'admin',
    responses: { 200: { description: 'The counts', schema: t.Object({ id: t.String(), counts: holdings }), example: { id: storeExample.id, counts: holdingsExample } } },
    errors: [notFound],
  }),
  pauseSync: apiDoc({
    summary: 'Pause a store’s catalogue sync',
    description: 'No scheduled or manual pass runs until it is resumed; a step in hand is stopped first, and a pass under way keeps its position. Pausing a paused store keeps the first pause’s time.',
    tag: 'stores',
    auth: 'admin',
    responses: one('The store, its sync `paused`'),
    errors: [notFound, [409, 'store_being_removed', 'store st_01JD8M1N2P3Q4R5S6T7V8W9X0Y is being removed or disconnected; try again once that has answered']],
  }),
  resumeSync: apiDoc({
    summary: 'Resume a store’s catalogue sync',
    description: 'A pass that was under way goes on from where it stopped; otherwise the next comes on schedule or with `POST .../sync`.',
    tag: 'stores',
    auth: 'admin',
    responses: one('The store with its sync state'),
    errors: [notFound, [409, 'store_being_removed', 'store st_01JD8M1N2P3Q4R5S6T7V8W9X0Y is being removed or disconnected; try again once that has answered']],
  }),
  registerHooks: apiDoc({ summary: 'Register a store’s webhooks again', description: `With the saved credentials; the outcome is in \`hooks\`. ${connection}`, tag: 'stores', auth: 'admin', responses: one('The store after registering'), errors: [notFound] }),
  getSettings: apiDoc({ summary: 'Get a store’s settings', tag: 'stores', auth: 'admin', responses: { 200: { description: 'The settings', schema: settings, example: { itemCondition: 'new' } } }, errors: [notFound] }),
  saveSettings: apiDoc({
    summary: 'Replace a store’s settings',
    description: 'The whole document: item condition, return policy and shipping rates (docs/signals.md describes each field).',
    tag: 'stores',
    auth: 'admin',
    body: { schema: settings, description: 'The settings document', example: { itemCondition: 'new' } },
    responses: { 200: { description: 'The saved settings', schema: settings, example: { itemCondition: 'new' } } },
    errors: [...body.slice(1), [400, 'invalid_settings', 'itemCondition: expected one of new, used, refurbished, damaged'], notFound],
  }),
};
