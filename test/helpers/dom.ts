import { Window } from 'happy-dom';

export interface Page {
  window: Window;
  document: Document;
  script: HTMLScriptElement;
}

/**
 * A storefront page in happy-dom at `url`, with `bodyHtml` and the embed script tag carrying
 * `attrs`. External scripts are never loaded; tests evaluate the bundle themselves.
 */
export function makePage(url: string, bodyHtml = '', attrs: Record<string, string> = {}, headHtml = ''): Page {
  const window = new Window({
    url,
    settings: { disableJavaScriptFileLoading: true, disableCSSFileLoading: true, navigator: { userAgent: 'happy-dom' } },
  });
  const document = window.document as unknown as Document;
  document.write(`<!doctype html><html><head>${headHtml}</head><body>${bodyHtml}</body></html>`);
  const script = document.createElement('script');
  script.setAttribute('src', 'https://svc.example.com/embed.js');
  for (const [name, value] of Object.entries(attrs)) script.setAttribute(name, value);
  document.body.appendChild(script);
  return { window, document, script };
}
