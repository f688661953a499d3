import { Elysia } from 'elysia';
import type { HTMLBundle } from 'bun';
import { keyHasScope } from '../auth/keys.ts';
import { readBodyLimited } from '../lib/body.ts';
import { errorResponse } from '../lib/errors.ts';
import { fillTemplate } from '../lib/html-template.ts';
import { htmlResponse, loadPageBundle, pageCsp, type PageBundle } from '../lib/page-bundle.ts';
import { crossOriginProblem } from '../lib/same-origin.ts';
import { previewPage, previewRequestOf } from './preview.ts';
import { cookieValue, sessionCookieName } from './session-routes.ts';
import type { SessionStore } from './sessions.ts';
import consolePage from './ui/index.html';

export const loadConsolePage = () => loadPageBundle(consolePage as HTMLBundle);

interface ConsolePageDeps {
  page: PageBundle;
  site: { name: string };
  baseUrl: string;
  sessions: SessionStore;
}

const PREVIEW_FORM_BYTES = 8192;

/**
 * GET /console and /console/* serve the console's page shell (the app routes in the browser); the
 * console then talks to the documented API with its session cookie. POST /console/widget-preview
 * renders the widget builder's sample page for a signed-in admin.
 */
export function consolePageRoutes({ page, site, baseUrl, sessions }: ConsolePageDeps) {
  const shell = fillTemplate(page.html, { TITLE: `${site.name} console`, SITE: site.name, BASE: baseUrl });
  const csp = pageCsp({ 'frame-src': "'self'" });
  const serveShell = () => htmlResponse(shell, { csp });
  const cookie = sessionCookieName(baseUrl.startsWith('https:'));
  return new Elysia({ name: 'console-pages' })
    .get('/console', serveShell)
    .get('/console/*', serveShell)
    .post('/console/widget-preview', async ({ request }) => {
      const problem = crossOriginProblem(request, baseUrl);
      if (problem) return errorResponse(403, 'cross_origin_refused', problem);
      const raw = cookieValue(request, cookie);
      const key = raw === null ? null : sessions.resolve(raw);
      if (!key) return errorResponse(401, 'session_expired', 'sign in to the console to preview the widget');
      if (!keyHasScope(key, 'admin')) return errorResponse(403, 'insufficient_scope', 'the widget preview needs an admin session');
      const form = new URLSearchParams(new TextDecoder().decode(await readBodyLimited(request, PREVIEW_FORM_BYTES)));
      const preview = previewPage(previewRequestOf(form));
      return htmlResponse(preview.html, { csp: preview.csp, cache: 'no-store' });
    });
}
