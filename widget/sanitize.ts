/** Elements an FAQ answer may use; everything else is reduced to its text. */
const ALLOWED = new Set(['P', 'BR', 'UL', 'OL', 'LI', 'A', 'STRONG', 'B', 'EM', 'I']);

/**
 * Rebuild an answer's basic formatting in `doc` from scratch. The markup is parsed in an inert
 * document (no browsing context: no scripts run, no resources load), then only allowed elements are recreated,
 * with text as text nodes and links kept only for absolute http(s) URLs. No attribute but a checked
 * `href` survives, so event handlers and styles cannot reach the page.
 */
export function sanitizeAnswer(markup: string, doc: Document): DocumentFragment {
  const inert = doc.implementation.createHTMLDocument('');
  inert.body.innerHTML = markup;
  const out = doc.createDocumentFragment();
  copyChildren(inert.body, out, doc);
  return out;
}

function copyChildren(from: Node, to: Node, doc: Document): void {
  from.childNodes.forEach((node) => {
    if (node.nodeType === 3) {
      to.appendChild(doc.createTextNode(node.textContent ?? ''));
      return;
    }
    if (node.nodeType !== 1) return;
    const element = node as Element;
    const tag = element.tagName.toUpperCase();
    if (tag === 'SCRIPT' || tag === 'STYLE' || tag === 'TEMPLATE') return;
    if (!ALLOWED.has(tag)) {
      copyChildren(element, to, doc);
      return;
    }
    const copy = doc.createElement(tag.toLowerCase());
    if (tag === 'A') {
      const href = safeHref(element.getAttribute('href'));
      if (!href) {
        copyChildren(element, to, doc);
        return;
      }
      copy.setAttribute('href', href);
      copy.setAttribute('rel', 'nofollow noopener noreferrer');
    }
    copyChildren(element, copy, doc);
    to.appendChild(copy);
  });
}

function safeHref(href: string | null): string | null {
  if (!href) return null;
  try {
    const url = new URL(href);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
  } catch {
    return null;
  }
}
