import { Elysia } from 'elysia';
import type { HTMLBundle } from 'bun';
import type { LeadStore } from '../auth/leads.ts';
import { readBodyLimited } from '../lib/body.ts';
import { undocumentedRoute } from '../lib/access.ts';
import { hiddenCharacterIn } from '../lib/email.ts';
import { ApiError } from '../lib/errors.ts';
import { fillTemplate, type SafeHtml } from '../lib/html-template.ts';
import { htmlResponse, loadPageBundle, pageCsp, type PageBundle } from '../lib/page-bundle.ts';
import { rateLimitHeaders, type TierDecision } from '../ratelimit/tiers.ts';
import landingPage from './landing.html';
import { landingBody, signedUpBody, type LandingContext } from './render.ts';

export const loadLandingPage = () => loadPageBundle(landingPage as HTMLBundle);

/** An email form is tiny; anything larger is not this page's form. */
const FORM_BYTES = 4096;

interface LandingDeps {
  page: PageBundle;
  context: LandingContext;
  leads: LeadStore;
  /** Takes one token from the bucket the sign-up API (POST /api/v1/public/leads) draws from. */
  signUpLimit: (request: Request) => TierDecision | Promise<TierDecision>;
}

/**
 * GET / is the public landing page; POST / is its sign-up form, which works without JavaScript:
 * the answer is a server-rendered page with the token (201) or the form again with the error next
 * to the field (400 invalid email, 413, 415, 429 with Retry-After); a known email is answered as a new one.
 */
export function landingRoutes({ page, context, leads, signUpLimit }: LandingDeps) {
  const csp = pageCsp();
  const title = `${context.site.name}: page-scan telemetry`;
  const respond = (body: SafeHtml, status: number, headers: Record<string, string> = {}) =>
    htmlResponse(fillTemplate(page.html, { TITLE: title, BODY: body }), { status, csp, headers, cache: 'no-store' });
  const formError = (status: number, email: string, error: string, headers: Record<string, string> = {}) =>
    respond(landingBody(context, { email, error }), status, headers);

  // Pages, kept out of the API document; the form takes its sign-up limit itself, to answer a refusal as a page.
  const page_ = { detail: undocumentedRoute({ auth: 'public' }) };
  return new Elysia({ name: 'landing' })
    .get('/', () => htmlResponse(fillTemplate(page.html, { TITLE: title, BODY: landingBody(context, { email: '', error: null }) }), { csp }), page_)
    .post('/', async ({ request }) => {
      const decision = await signUpLimit(request);
      if (!decision.allowed) {
        return formError(429, '', `Too many sign-ups from your network. Try again in ${decision.retryAfterSeconds} seconds.`, {
          'Retry-After': String(decision.retryAfterSeconds),
          ...rateLimitHeaders(decision),
        });
      }
      const type = (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
      if (type !== 'application/x-www-form-urlencoded') return formError(415, '', 'Send the form from this page.');
      let email = '';
      try {
        email = (new URLSearchParams(new TextDecoder().decode(await readBodyLimited(request, FORM_BYTES))).get('email') ?? '');
        const lead = await leads.signUp(email);
        return respond(signedUpBody(context, lead.email, lead.apiToken), 201);
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        const shown = email.slice(0, 254);
        if (error.code === 'invalid_email') {
          const hidden = hiddenCharacterIn(email);
          return formError(400, shown, hidden ? `The address holds an invisible or control character (${hidden}). Type it again.` : 'Enter a valid email address, such as name@example.com.');
        }
        if (error.code === 'payload_too_large') return formError(413, '', 'The form was too large. Enter just your email address.');
        throw error;
      }
    }, page_);
}
