import { Elysia } from 'elysia';
import type { HTMLBundle } from 'bun';
import { undocumentedRoute } from '../lib/access.ts';
import { readBodyLimited } from '../lib/body.ts';
import { fillTemplate } from '../lib/html-template.ts';
import { htmlResponse, loadPageBundle, pageCsp, type PageBundle } from '../lib/page-bundle.ts';
import { previewPage, previewRequestOf } from './preview.ts';
import consolePage from './ui/index.html';

export const loadConsolePage = () => loadPageBundle(consolePage as HTMLBundle);

interface ConsolePageDeps {
  page: PageBundle;
  site: { name: string };
  baseUrl: string;
}

const PREVIEW_FORM_BYTES = 8192;

/**
 * GET /console and /console/* serve the console's page shell (the app routes in the browser); the
 * console then talks to the documented API with its session cookie. POST /console/widget-preview
 * renders the widget builder's sample page for an admin (its session, as the route declares).
 */
export function consolePageRoutes({ page, site, baseUrl }: ConsolePageDeps) {
  const shell = fillTemplate(page.html, { TITLE: `${site.name} console`, SITE: site.name, BASE: baseUrl });
  const csp = pageCsp({ 'frame-src': "'self'" });
  const serveShell = () => htmlResponse(shell, { csp });
  const shellRoute = { detail: undocumentedRoute({ auth: 'public' }) };
  return new Elysia({ name: 'console-pages' })
    .get('/console', serveShell, shellRoute)
    .get('/console/*', serveShell, shellRoute)
    .post(
      '/console/widget-preview',
      async ({ request }) => {
        const form = new URLSearchParams(new TextDecoder().decode(await readBodyLimited(request, PREVIEW_FORM_BYTES)));
        const preview = previewPage(previewRequestOf(form));
        return htmlResponse(preview.html, { csp: preview.csp, cache: 'no-store' });
      },
      { detail: undocumentedRoute({ auth: 'admin' }) },
    );
}
