/**
 * A small HTML tokenizer and the two cleaners built on it: basic-HTML sanitizing for FAQ answers and
 * plain-text extraction. Merchant markup is never trusted: output is rebuilt from tokens, so nothing
 * the input says about attributes, comments or unbalanced tags reaches a page.
 */

type Token =
  | { kind: 'text'; text: string }
  | { kind: 'open'; name: string; attrs: Map<string, string>; selfClosing: boolean }
  | { kind: 'close'; name: string };

/** Elements whose content is not text for a reader: dropped with their content. */
const RAW_CONTENT = new Set(['script', 'style', 'template', 'textarea', 'title', 'iframe', 'noscript', 'noembed', 'noframes', 'xmp', 'object', 'svg', 'math']);
const VOID = new Set(['br', 'hr', 'img', 'input', 'meta', 'link', 'area', 'base', 'col', 'embed', 'source', 'track', 'wbr']);
/** Elements whose boundaries separate words in plain text. */
const BLOCK = new Set(['p', 'br', 'div', 'li', 'ul', 'ol', 'tr', 'td', 'th', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'section', 'article', 'blockquote', 'hr', 'table', 'dd', 'dt']);
/** What an FAQ answer may keep (the lead's contract); `a` additionally needs an absolute http(s) href. */
const ALLOWED = new Set(['p', 'br', 'ul', 'ol', 'li', 'strong', 'b', 'em', 'i', 'a']);

const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };
const TAG_NAME = /^[a-zA-Z][a-zA-Z0-9-]*/;
const ATTRIBUTE = /^[\s/]*([^\s"'<>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]*)))?/;
/** C0 and C1 controls and DEL, except tab, line feed and carriage return (whitespace in HTML). */
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/g;

export function stripControlCharacters(text: string): string {
  return text.replace(CONTROL, '');
}

export function decodeEntities(text: string): string {
  return text.replace(/&(#[xX][0-9a-fA-F]{1,6}|#\d{1,7}|[a-zA-Z]{2,8});/g, (whole, name: string) => {
    if (name[0] === '#') {
      const code = name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
      const valid = code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff);
      return valid ? stripControlCharacters(String.fromCodePoint(code)) : '\ufffd';
    }
    return NAMED[name.toLowerCase()] ?? whole;
  });
}

export function escapeHtmlText(text: string): string {
  return text.replace(/[&<>]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : '&gt;'));
}

export function escapeAttribute(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Split markup into text, open and close tags; comments, doctypes and processing instructions vanish. */
function* tokenize(html: string): Generator<Token> {
  let at = 0;
  while (at < html.length) {
    const lt = html.indexOf('<', at);
    if (lt === -1) {
      yield { kind: 'text', text: decodeEntities(html.slice(at)) };
      return;
    }
    if (lt > at) yield { kind: 'text', text: decodeEntities(html.slice(at, lt)) };
    const rest = html.slice(lt + 1);
    if (rest.startsWith('!--')) {
      const end = html.indexOf('-->', lt + 4);
      at = end === -1 ? html.length : end + 3;
      continue;
    }
    if (rest[0] === '!' || rest[0] === '?') {
      const end = html.indexOf('>', lt);
      at = end === -1 ? html.length : end + 1;
      continue;
    }
    const closing = rest[0] === '/';
    const name = TAG_NAME.exec(closing ? rest.slice(1) : rest)?.[0];
    const end = name ? findTagEnd(html, lt) : -1;
    if (!name || end === -1) {
      // Not a tag (`a < b`, or a tag never closed): the `<` is text.
      yield { kind: 'text', text: '<' };
      at = lt + 1;
      continue;
    }
    const lower = name.toLowerCase();
    const inner = html.slice(lt + 1 + (closing ? 1 : 0) + name.length, end);
    at = end + 1;
    if (closing) {
      yield { kind: 'close', name: lower };
      continue;
    }
    if (RAW_CONTENT.has(lower)) {
      const close = new RegExp(`</${lower}\\s*>`, 'i').exec(html.slice(at));
      at = close ? at + close.index + close[0].length : html.length;
      continue;
    }
    yield { kind: 'open', name: lower, attrs: parseAttributes(inner), selfClosing: inner.trimEnd().endsWith('/') };
  }
}

/** Index of the `>` ending the tag opened at `lt`, skipping `>` inside quoted attribute values. */
function findTagEnd(html: string, lt: number): number {
  let quote: string | null = null;
  for (let i = lt + 1; i < html.length; i++) {
    const c = html[i]!;
    if (quote) {
      if (c === quote) quote = null;
    } else if (c === '"' || c === "'") {
      quote = c;
    } else if (c === '>') {
      return i;
    }
  }
  return -1;
}

function parseAttributes(inner: string): Map<string, string> {
  const attrs = new Map<string, string>();
  let rest = inner;
  for (;;) {
    const match = ATTRIBUTE.exec(rest);
    if (!match || match[0].length === 0) break;
    const name = match[1]!.toLowerCase();
    if (!attrs.has(name)) attrs.set(name, decodeEntities(match[2] ?? match[3] ?? match[4] ?? ''));
    rest = rest.slice(match[0].length);
  }
  return attrs;
}

/** An absolute http(s) URL, normalised, or null (javascript:, data:, relative, malformed...). */
export function safeHttpUrl(value: string | null | undefined): string | null {
  if (!value) return null;
  const trimmed = stripControlCharacters(value).trim();
  if (!/^https?:\/\//i.test(trimmed)) return null;
  try {
    const url = new URL(trimmed);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
  } catch {
    return null;
  }
}

/**
 * FAQ answer markup reduced to `p br ul ol li strong b em i` and `a href="http(s)://..."` (no other
 * attribute), balanced and escaped. Other tags are dropped with their text kept; script/style
 * content is dropped; control characters removed.
 */
export function sanitizeBasicHtml(html: string): string {
  let out = '';
  const open: string[] = [];
  for (const token of tokenize(stripControlCharacters(html))) {
    if (token.kind === 'text') {
      out += escapeHtmlText(token.text);
    } else if (token.kind === 'open') {
      if (!ALLOWED.has(token.name)) continue;
      if (token.name === 'br') {
        out += '<br>';
        continue;
      }
      if (token.name === 'a') {
        const href = safeHttpUrl(token.attrs.get('href'));
        if (!href) continue;
        out += `<a href="${escapeAttribute(href)}">`;
      } else {
        out += `<${token.name}>`;
      }
      if (token.selfClosing) out += `</${token.name}>`;
      else open.push(token.name);
    } else {
      const depth = open.lastIndexOf(token.name);
      if (depth === -1) continue;
      while (open.length > depth) out += `</${open.pop()}>`;
    }
  }
  while (open.length > 0) out += `</${open.pop()}>`;
  return out;
}

/** Readable text of markup: tags dropped (block boundaries become spaces), entities decoded, whitespace collapsed. */
export function htmlToPlainText(html: string): string {
  let out = '';
  for (const token of tokenize(stripControlCharacters(html))) {
    if (token.kind === 'text') out += token.text;
    else if (BLOCK.has(token.name) || (token.kind === 'open' && VOID.has(token.name))) out += ' ';
  }
  return out.replace(/[\s\u00a0]+/g, ' ').trim();
}
