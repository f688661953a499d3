import { ApiFailure } from './api.ts';

// What the console says when the API refuses something: one sentence per error code, in the
// console's words. The API's own `detail` is written for every client (it may name CLI commands or
// fields by their JSON names), so a sentence uses it only where it is the very thing to fix (which
// field, which value). test/console-errors.test.ts holds every code the API documents for the
// console's endpoints to having a sentence here.

type Sentence = (failure: ApiFailure) => string;

/** The detail as the end of a sentence: its first letter kept, no trailing full stop. */
const clause = (detail: string) => detail.trim().replace(/[.\s]+$/, '');

/** "no lead with id "x"" -> "lead"; what a 404 names. */
const missingThing = (detail: string) => /^no (.+?) with id\b/.exec(detail)?.[1] ?? null;

const SIGNED_OUT = 'You are not signed in any more: sign in again.';
const UNREADABLE = 'svc could not read what the console sent. Reload the page and try again.';

export const SENTENCES: Record<string, Sentence> = {
  // Forms and filters: the detail names the field and what it needs.
  invalid_request: (f) => `Check the form: ${clause(f.detail)}.`,
  invalid_query: (f) => `svc cannot use this filter: ${clause(f.detail)}.`,
  invalid_domain: (f) => `Not a host name: ${clause(f.detail)}. Enter hosts such as shop.example.com (or *.example.com for its subdomains), without https:// or a path.`,
  invalid_credentials: (f) => `The credentials are incomplete or not in the right form: ${clause(f.detail)}.`,
  invalid_scopes: () => 'Choose at least one of the scopes listed.',
  invalid_settings: (f) => `Check the settings: ${clause(f.detail)}.`,
  store_required: () => 'A products:read key serves the FAQ widget of one store: choose the store it is for.',
  unknown_store: () => 'The chosen store no longer exists. Reload the page and choose another.',
  private_target: (f) =>
    `svc connects only to stores on the public internet, and this one is not (${clause(f.detail.split('; ')[0]!)}). For a store on svc’s own network, the operator can allow it by starting svc with SVC_ALLOW_PRIVATE_TARGETS=1.`,
  store_exists: () => 'This store is connected already: another store of this platform uses the same shop domain, store hash or site URL.',
  store_being_removed: () => 'This store is being removed or disconnected right now: wait for that to finish, then reload the page.',
  sync_paused: () => 'This store’s sync is paused: resume it on the store’s page first.',
  not_found: (f) => {
    const thing = missingThing(f.detail);
    return thing ? `This ${thing} no longer exists: someone may have removed it. Reload the page.` : 'What this page shows no longer exists. Reload the page.';
  },
  // Signing in and the session.
  invalid_api_key: () => 'svc does not know this key: it may be mistyped, cut short, or revoked.',
  insufficient_scope: () => 'The key you are signed in with may not do this: it needs the admin scope.',
  session_expired: () => SIGNED_OUT,
  unauthorized: () => SIGNED_OUT,
  cross_origin_refused: () => 'svc refused this request because it did not come from svc’s own address. Open the console at the address svc is configured with (its base URL) and try again.',
  // Limits and the server's state.
  rate_limited: (f) => {
    const seconds = /retry in (\d+) s/.exec(f.detail)?.[1];
    return `Too many attempts from this address: try again ${seconds ? `in ${seconds} seconds` : 'in a minute'}.`;
  },
  too_many_uploads: () => 'This browser is sending too much at once: wait a moment and try again.',
  server_busy: () => 'svc is busy right now: try again in a moment.',
  payload_too_large: () => 'That is more than svc takes in one request: shorten the text and try again.',
  json_too_deep: () => UNREADABLE,
  json_too_many_values: () => 'That is more than svc takes in one request: shorten the lists and try again.',
  malformed_json: () => UNREADABLE,
  unsupported_media_type: () => UNREADABLE,
  reserved_key: (f) => `svc does not take one of the names entered: ${clause(f.detail)}.`,
  body_timeout: () => 'The request took too long to arrive: try again.',
  // The console's own (api.ts): no answer at all, or one that is not svc's JSON.
  unreachable: () => 'svc could not be reached: check the connection and try again.',
  http_error: (f) => `svc did not answer as expected (HTTP ${f.status}). Try again; if it keeps happening, check svc’s log.`,
};

/**
 * Codes the console never meets: they belong to endpoints it does not call (scanners, platform
 * webhooks, the storefront widget, health checks). Should one reach it, the fallback shows the API's
 * own detail.
 */
export const NOT_FROM_CONSOLE_ENDPOINTS = new Set([
  'ambiguous_auth',
  'app_secret_not_configured',
  'batch_exceeds_limit',
  'database_not_writable',
  'database_unavailable',
  'invalid_email',
  'invalid_field',
  'invalid_shop_domain',
  'invalid_signature',
  'invalid_timestamp',
  'invalid_token',
  'key_not_bound',
  'lead_exists',
  'missing_api_key',
  'missing_credentials',
  'missing_entry_id',
  'missing_field',
  'missing_order_id',
  'missing_product_id',
  'missing_scope',
  'missing_store',
  'missing_topic',
  'origin_not_allowed',
  'persistence_failed',
  'signals_withdrawn',
  'timestamp_out_of_window',
  'too_many_scans',
  'unverified_webhook',
]);

/** Sentences a page words its own way for some codes (sign-in, for instance, says what a key needs to open the console). */
export type PageSentences = Partial<Record<string, string>>;

/** The sentence the console shows for `error`: an API refusal (api.ts ApiFailure), or the console's own check (an Error saying what to fix). */
export function errorSentence(error: unknown, page: PageSentences = {}): string {
  if (error instanceof ApiFailure) {
    const own = page[error.code];
    if (own) return own;
    const sentence = SENTENCES[error.code];
    return sentence ? sentence(error) : `svc refused this: ${clause(error.detail)}.`;
  }
  return String((error as Error)?.message ?? error);
}
