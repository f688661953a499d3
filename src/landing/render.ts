import { html, type SafeHtml } from '../lib/html-template.ts';

export interface LandingContext {
  site: { name: string; contact: string | null };
  baseUrl: string;
  rates: { anonymous: number; authed: number };
}

export interface SignUpForm {
  email: string;
  error: string | null;
}

const header = (ctx: LandingContext) => html`<a class="skip-link" href="#main">Skip to content</a>
<header class="site-header">
  <a class="brand" href="/"><span class="brand-mark" aria-hidden="true"></span>${ctx.site.name}</a>
  <a class="button secondary small" href="/console">Operator console</a>
</header>`;

const footer = (ctx: LandingContext) => html`<footer class="site-footer">
  ${ctx.site.contact === null ? '' : html`<span>${ctx.site.contact}</span>`}
  <span><a href="/docs/api">API reference</a> · Powered by svc</span>
</footer>`;

/** The example scan a new token can send at once (mode 1: X-Probe-Token). */
export function exampleScan(baseUrl: string, token: string): string {
  const payload = {
    url: 'https://shop.example.com/products/blue-mug',
    hostname: 'shop.example.com',
    pageType: 'product',
    platform: { platform: 'custom', confidence: 0.9 },
    signals: { title: { value: 'Blue mug', length: 8 }, headings: { h1: ['Blue mug'], h2: [] } },
    signalPresence: { title: true, description: false, h1: true },
    quality: { grade: 'C', percentage: 64 },
  };
  return [
    `curl -i -X POST '${baseUrl}/api/v1/probe/telemetry' \\`,
    `  -H 'Content-Type: application/json' \\`,
    `  -H 'X-Probe-Token: ${token}' \\`,
    `  --data '${JSON.stringify(payload)}'`,
  ].join('\n');
}

/** The public landing page: what this instance offers scanner authors, and the sign-up form. */
export function landingBody(ctx: LandingContext, form: SignUpForm): SafeHtml {
  const invalid = form.error !== null;
  return html`${header(ctx)}
<main id="main">
  <section class="hero">
    <div>
      <h1>Collect your page scans in one place</h1>
      <p class="lead">${ctx.site.name} takes the page-scan reports your browser extension, CI step or crawler produces, stores them, and turns them into dashboards and badges.</p>
      <ul class="points">
        <li>One HTTP call per scan: <code>POST /api/v1/probe/telemetry</code>, answered <code>204</code> once it is stored.</li>
        <li>Sign up with your email and send up to ${ctx.rates.anonymous} scans a minute at once; ${ctx.rates.authed} a minute once the operator verifies you.</li>
        <li>A status badge for every scanned site: <code>/api/v1/public/probe/badge?domain=…</code></li>
      </ul>
    </div>
    <form class="card signup" method="post" action="/" novalidate>
      <h2>Get an API token</h2>
      ${invalid ? html`<div class="notice error" role="alert" id="form-problem">Your sign-up did not go through. See below.</div>` : ''}
      <div class="field">
        <label for="email">Email address</label>
        <input id="email" name="email" type="email" autocomplete="email" inputmode="email" required maxlength="254" value="${form.email}"
          aria-describedby="${invalid ? 'email-error email-hint' : 'email-hint'}"${invalid ? html` aria-invalid="true" autofocus` : ''}>
        ${invalid ? html`<p class="field-error" id="email-error">${form.error}</p>` : ''}
        <p class="field-hint" id="email-hint">Only used to identify your token to the operator. The token is shown once.</p>
      </div>
      <button class="button" type="submit">Get my API token</button>
    </form>
  </section>
  <section aria-labelledby="how">
    <h2 id="how">How it works</h2>
    <div class="steps">
      <div class="card"><span class="step-number" aria-hidden="true">1</span><h3>Get a token</h3><p class="muted">Sign up above. Your token is a secret: keep it in your scanner's settings, never in public code.</p></div>
      <div class="card"><span class="step-number" aria-hidden="true">2</span><h3>Send scans</h3><p class="muted">Post each report as JSON with the header <code>X-Probe-Token</code>. Only <code>hostname</code> and <code>signals</code> are required; the <a href="/docs/api">API reference</a> lists every field.</p></div>
      <div class="card"><span class="step-number" aria-hidden="true">3</span><h3>Show results</h3><p class="muted">Embed the badge of a site's latest grade, or ask the operator for a dashboard key.</p></div>
    </div>
  </section>
</main>
${footer(ctx)}`;
}

/** The sign-up result: the token, once, with a ready-to-run example. Served with Cache-Control: no-store. */
export function signedUpBody(ctx: LandingContext, email: string, token: string): SafeHtml {
  return html`${header(ctx)}
<main id="main" class="result">
  <h1>Your API token</h1>
  <p>Signed up as <strong>${email}</strong>.</p>
  <div class="notice warn" role="note"><strong>Copy it now.</strong> It is shown only this once; ${ctx.site.name} keeps only a hash of it. If you lose it, sign up again or ask the operator to issue a new one. Every sign-up gets a token of its own; a token from an earlier sign-up keeps working.</div>
  <div class="token-row">
    <code class="token" id="token">${token}</code>
    <button class="button secondary" type="button" data-copy="token" data-label="Token" hidden>Copy</button>
  </div>
  <h2>Send your first scan</h2>
  <p>Run this in a terminal. The answer <code>HTTP/1.1 204 No Content</code> means the scan is stored.</p>
  <pre><code id="example">${exampleScan(ctx.baseUrl, token)}</code></pre>
  <p><button class="button secondary small" type="button" data-copy="example" data-label="Example" hidden>Copy example</button></p>
  <p class="visually-hidden" id="copy-status" role="status" aria-live="polite"></p>
  <h2>Limits</h2>
  <p>Until the operator verifies your sign-up, your token sends up to ${ctx.rates.anonymous} scans a minute; after that, ${ctx.rates.authed}. Over the limit the answer is <code>429</code> with a <code>Retry-After</code> header.</p>
  <p><a href="/">Back to the start page</a></p>
</main>
${footer(ctx)}`;
}
