/**
 * A small HTML scanner and what is built on it: basic-HTML sanitizing for FAQ answers and the one
 * HTML-to-text routine (block-aware text for descriptions and answers, one line for short fields).
 * Merchant markup is never trusted: output is rebuilt from what the scan reports, so nothing the
 * input says about attributes, comments or unbalanced tags reaches a page.
 *
 * Everything here runs in time linear in the input, whatever the input: each character is looked at
 * a bounded number of times (see `findTagEnd` for the one place where that needs care).
 */

import { decodeHTML, decodeHTMLAttribute } from 'entities/decode';

/** Counts the characters the tag scanner inspects: tests use it to show the work is linear. */
export interface ScanMeter {
  steps: number;
}

/** Elements whose content is not text for a reader: dropped with their content. */
const RAW_CONTENT = ['script', 'style', 'template', 'textarea', 'title', 'iframe', 'noscript', 'noembed', 'noframes', 'xmp', 'object', 'svg', 'math'];
const RAW_CLOSE = new Map(RAW_CONTENT.map((name) => [name, new RegExp(`</${name}\\s*>`, 'gi')]));
/** What an FAQ answer may keep (the lead's contract); `a` additionally needs an absolute http(s) href. */
const ALLOWED = new Set(['p', 'br', 'ul', 'ol', 'li', 'strong', 'b', 'em', 'i', 'a']);

/** C0 and C1 controls and DEL, except tab, line feed and carriage return (whitespace in HTML). */
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/g;

export function stripControlCharacters(text: string): string {
  return text.replace(CONTROL, '');
}

/**
 * Character references decoded once (`&amp;lt;` is the text `&lt;`), with the full HTML set of names
 * and the spec's rules for numeric ones (invalid code points become U+FFFD); control characters removed.
 */
export function decodeEntities(text: string): string {
  return stripControlCharacters(decodeHTML(text));
}

export function escapeHtmlText(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

/** Safe inside a double- or single-quoted attribute value. */
export function escapeAttribute(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const isAsciiLetter = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
const isNameChar = (c: number) => isAsciiLetter(c) || (c >= 48 && c <= 57) || c === 45;
/** HTML whitespace (space, tab, LF, FF, CR) and `/`, which separate attributes. */
const isAttributeGap = (c: number) => c === 32 || c === 9 || c === 10 || c === 12 || c === 13 || c === 47;
const isSpace = (c: number) => c === 32 || c === 9 || c === 10 || c === 12 || c === 13;

/**
 * Index of the `>` ending a tag whose attributes start at `from`, skipping `>` inside quoted
 * sections, or -1 when the tag never ends (then its `<` is text and scanning resumes after it).
 *
 * A naive scan from every `<` is quadratic on input such as 100k `<` or `<a"` repeated: each start
 * scans to the end. `seen` makes it linear: a scan is a deterministic walk over (position, quote
 * state); once a walk from some point reached the end without finding `>`, any later walk that meets
 * the same position in the same state would too, so it stops there. A walk that finds `>` marks only
 * positions before it, which no later scan (they all start after it) visits. Each (position, state)
 * pair is therefore walked at most once per input once marking starts; it starts (and `seen` is
 * allocated) only when a walk gets long, so ordinary tags cost no marking at all.
 */
function findTagEnd(html: string, from: number, scan: ScanState, meter?: ScanMeter): number {
  let state = 1; // 1 unquoted, 2 inside "...", 4 inside '...'
  let seen = scan.seen;
  const n = html.length;
  for (let i = from; i < n; i++) {
    if (seen === null && i - from >= UNMARKED_WALK) seen = scan.seen = new Uint8Array(n);
    if (seen !== null) {
      if (seen[i]! & state) return -1;
      seen[i]! |= state;
    }
    if (meter) meter.steps++;
    const c = html.charCodeAt(i);
    if (state === 1) {
      if (c === 62) return i;
      if (c === 34) state = 2;
      else if (c === 39) state = 4;
    } else if ((state === 2 && c === 34) || (state === 4 && c === 39)) {
      state = 1;
    }
  }
  return -1;
}

/** How far a tag scan walks before marking starts: later scans may walk these few positions again, once. */
const UNMARKED_WALK = 256;

interface ScanState {
  seen: Uint8Array | null;
}

/** Attributes of one tag (`inner` is the text between its name and its `>`); the first of a repeated name wins. */
function parseAttributes(inner: string, meter?: ScanMeter): Map<string, string> {
  const attrs = new Map<string, string>();
  let i = 0;
  const n = inner.length;
  while (i < n) {
    while (i < n && isAttributeGap(inner.charCodeAt(i))) i++;
    const nameStart = i;
    // Name: anything but whitespace, quotes, `<`, `>`, `/` and `=`; a tag whose next attribute starts
    // otherwise has no further attributes worth reading.
    while (i < n && !/[\s"'<>/=]/.test(inner[i]!)) i++;
    if (meter) meter.steps += i - nameStart + 1;
    if (i === nameStart) break;
    const name = inner.slice(nameStart, i).toLowerCase();
    let j = i;
    while (j < n && isSpace(inner.charCodeAt(j))) j++;
    let value = '';
    if (inner[j] === '=') {
      j++;
      while (j < n && isSpace(inner.charCodeAt(j))) j++;
      const quote = inner[j];
      const close = quote === '"' || quote === "'" ? inner.indexOf(quote, j + 1) : -1;
      if (close !== -1) {
        value = inner.slice(j + 1, close);
        j = close + 1;
      } else {
        const start = j;
        while (j < n && !/[\s>]/.test(inner[j]!)) j++;
        value = inner.slice(start, j);
      }
      if (meter) meter.steps += j - i;
      i = j;
    }
    if (!attrs.has(name)) attrs.set(name, stripControlCharacters(decodeHTMLAttribute(value)));
  }
  return attrs;
}

/** Text between tags of markup without control characters: only a character reference can bring one back. */
const textOf = (chunk: string): string => (chunk.includes('&') ? decodeEntities(chunk) : chunk);

/** What a markup scan reports, in document order (see `scanMarkup`). */
export interface MarkupVisitor {
  /** Text between tags, entities decoded once, control characters removed. */
  text(text: string): void;
  /** An open tag: its lower-cased name; its attributes are `html.slice(attrsStart, attrsEnd)` (see `parseAttributes`). */
  open(name: string, selfClosing: boolean, html: string, attrsStart: number, attrsEnd: number): void;
  close(name: string): void;
}

/** Whitespace as `String.prototype.trim` sees it. */
const isTrimmed = (c: number) => (c <= 32 ? c === 32 || (c >= 9 && c <= 13) : c >= 160 && /\s/.test(String.fromCharCode(c)));

/** Whether the text before a tag's `>` ends with `/` (trailing whitespace aside): `<br/>`, `<img src=x />`. */
function endsWithSlash(html: string, from: number, end: number): boolean {
  let i = end - 1;
  while (i >= from && isTrimmed(html.charCodeAt(i))) i--;
  return i >= from && html.charCodeAt(i) === 47;
}

/**
 * Walks markup once, without its control characters, reporting text, open and close tags (names lower-cased, entities decoded once);
 * comments, doctypes and processing instructions vanish, raw-content elements vanish with their
 * content, and a `<` that starts no complete tag is text. Attributes are left for the visitor to
 * parse when it needs them.
 */
export function scanMarkup(markup: string, visitor: MarkupVisitor, meter?: ScanMeter): void {
  const html = stripControlCharacters(markup);
  const n = html.length;
  const scan: ScanState = { seen: null };
  // `text` is where the text not yet reported starts: a `<` that starts no tag stays part of it.
  let text = 0;
  let at = 0;
  while (at < n) {
    const lt = html.indexOf('<', at);
    if (lt === -1) break;
    const next = html.charCodeAt(lt + 1);
    let skipTo: number;
    if (next === 33 && html.charCodeAt(lt + 2) === 45 && html.charCodeAt(lt + 3) === 45) {
      const close = html.indexOf('-->', lt + 4);
      skipTo = close === -1 ? n : close + 3;
      if (lt > text) visitor.text(textOf(html.slice(text, lt)));
    } else if (next === 33 || next === 63) {
      // <!doctype ...>, <![CDATA[...]]>, <?xml ...?>: markup declarations, never text.
      const close = html.indexOf('>', lt + 2);
      skipTo = close === -1 ? n : close + 1;
      if (lt > text) visitor.text(textOf(html.slice(text, lt)));
    } else {
      const closing = next === 47;
      const nameStart = lt + 1 + (closing ? 1 : 0);
      let nameEnd = nameStart;
      if (isAsciiLetter(html.charCodeAt(nameStart))) while (nameEnd < n && isNameChar(html.charCodeAt(nameEnd))) nameEnd++;
      if (meter) meter.steps += nameEnd - nameStart + 1;
      const tagEnd = nameEnd > nameStart ? findTagEnd(html, nameEnd, scan, meter) : -1;
      if (tagEnd === -1) {
        // Not a tag (`a < b`, or a tag never closed): the `<` is text.
        at = lt + 1;
        continue;
      }
      skipTo = tagEnd + 1;
      const name = html.slice(nameStart, nameEnd).toLowerCase();
      if (lt > text) visitor.text(textOf(html.slice(text, lt)));
      const rawClose = closing ? undefined : RAW_CLOSE.get(name);
      if (closing) visitor.close(name);
      else if (rawClose) {
        rawClose.lastIndex = skipTo;
        const close = rawClose.exec(html);
        skipTo = close ? close.index + close[0].length : n;
      } else {
        visitor.open(name, endsWithSlash(html, nameEnd, tagEnd), html, nameEnd, tagEnd);
      }
    }
    at = text = skipTo;
  }
  if (text < n) visitor.text(textOf(html.slice(text)));
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
 * content is dropped; control characters removed. `meter` counts the scanner's work (see ScanMeter).
 */
export function sanitizeBasicHtml(html: string, meter?: ScanMeter): string {
  const out: string[] = [];
  const open: string[] = [];
  scanMarkup(html, {
    text: (text) => out.push(escapeHtmlText(text)),
    open(name, selfClosing, source, attrsStart, attrsEnd) {
      if (!ALLOWED.has(name)) return;
      if (name === 'br') return void out.push('<br>');
      if (name === 'a') {
        const href = safeHttpUrl(parseAttributes(source.slice(attrsStart, attrsEnd), meter).get('href'));
        if (!href) return;
        out.push(`<a href="${escapeAttribute(href)}">`);
      } else {
        out.push(`<${name}>`);
      }
      if (selfClosing) out.push(`</${name}>`);
      else open.push(name);
    },
    close(name) {
      const depth = open.lastIndexOf(name);
      if (depth === -1) return;
      while (open.length > depth) out.push(`</${open.pop()}>`);
    },
  }, meter);
  while (open.length > 0) out.push(`</${open.pop()}>`);
  return out.join('');
}

// ---------------------------------------------------------------------------------------------
// HTML to text

/**
 * One block of readable text. `paragraph` and `item` text may hold `\n` (a `<br>`); `item` is a list
 * item at `depth` (0 = outermost list); `row` is a table row, `table` numbering the tables of the input.
 */
export type TextBlock =
  | { kind: 'paragraph'; text: string; /** Set when the paragraph continues the list item at this depth (text after a nested list). */ itemDepth?: number }
  | { kind: 'heading'; text: string }
  | { kind: 'item'; text: string; depth: number; ordered: boolean; index: number; /** Numbers the outermost lists of the input: items of one list share it. */ list: number }
  | { kind: 'row'; cells: string[]; table: number };

/** Elements that start and end a block of text (everything else is inline: it adds no space). */
const BLOCKS = new Set([
  'address', 'article', 'aside', 'blockquote', 'caption', 'center', 'dd', 'details', 'dialog', 'dir', 'div', 'dl', 'dt', 'fieldset',
  'figcaption', 'figure', 'footer', 'form', 'header', 'hgroup', 'hr', 'legend', 'main', 'menu', 'nav', 'p', 'pre', 'section', 'summary',
]);
const HEADINGS = new Set(['h1', 'h2', 'h3', 'h4', 'h5', 'h6']);
/** Inline elements that stand for something (an image, a field): a word boundary, but not before punctuation. */
const SOFT_BREAKS = new Set(['img', 'input', 'select', 'button', 'video', 'audio', 'canvas', 'embed', 'wbr']);
const PUNCTUATION = /^[,.;:!?)\]}%…]/;
const WHITESPACE_RUN = /[\s\u00a0]+/g;
/** Whitespace that is not a single space: what collapsing would change. */
const UNCOLLAPSED = /[^\S ]| {2}/;

interface OpenItem {
  depth: number;
  ordered: boolean;
  index: number;
  /** Its first block was written: more text becomes a paragraph inside it. */
  continued: boolean;
}

/** Builds blocks from tokens: inline text is collected, whitespace collapsed, and each block boundary flushes it. */
class BlockBuilder implements MarkupVisitor {
  readonly blocks: TextBlock[] = [];
  private lines: string[] = [];
  private line = '';
  /** 0: none; 1: whitespace in the text; 2: a soft break from a tag (dropped before punctuation). */
  private space: 0 | 1 | 2 = 0;
  private heading = false;
  /** Open lists, each with its open item (kept while a nested list runs, so text after it continues the item). */
  private lists: { ordered: boolean; count: number; item: OpenItem | null }[] = [];
  private item: OpenItem | null = null;
  private outermostLists = 0;
  private row: string[] | null = null;
  private cell: string[] | null = null;
  private tables = 0;

  text(raw: string): void {
    // Whitespace at either end becomes a pending space; inside, runs collapse to one space (the
    // text is rebuilt only when it has a run other than single spaces).
    let start = 0;
    let end = raw.length;
    while (start < end && isTrimmed(raw.charCodeAt(start))) start++;
    while (end > start && isTrimmed(raw.charCodeAt(end - 1))) end--;
    if (start > 0 && this.line !== '') this.space = 1;
    if (start === end) return;
    let rest = start > 0 || end < raw.length ? raw.slice(start, end) : raw;
    if (UNCOLLAPSED.test(rest)) rest = rest.replace(WHITESPACE_RUN, ' ');
    if (this.space === 1 || (this.space === 2 && !PUNCTUATION.test(rest))) this.line += ' ';
    this.line += rest;
    this.space = end < raw.length ? 1 : 0;
  }

  softBreak(): void {
    if (this.line !== '' && this.space === 0) this.space = 2;
  }

  lineBreak(): void {
    if (this.line !== '') this.lines.push(this.line);
    this.line = '';
    this.space = 0;
  }

  /** Ends the current run of text: into the open table cell, else as a block of its own. */
  flush(): void {
    this.lineBreak();
    if (this.lines.length === 0) return;
    if (this.cell) {
      this.cell.push(...this.lines);
    } else if (this.item) {
      const text = this.lines.join('\n');
      // Text after a nested list still belongs to the item: a paragraph inside it, not a new bullet.
      if (this.item.continued) this.blocks.push({ kind: 'paragraph', text, itemDepth: this.item.depth });
      else this.blocks.push({ kind: 'item', text, depth: this.item.depth, ordered: this.item.ordered, index: this.item.index, list: Math.max(1, this.outermostLists) });
      this.item.continued = true;
    } else {
      this.blocks.push(this.heading ? { kind: 'heading', text: this.lines.join(' ') } : { kind: 'paragraph', text: this.lines.join('\n') });
    }
    this.lines = [];
  }

  open(name: string, selfClosing: boolean): void {
    this.start(name);
    if (selfClosing && name !== 'br') this.close(name);
  }

  private start(name: string): void {
    if (name === 'br') return this.lineBreak();
    if (SOFT_BREAKS.has(name)) return this.softBreak();
    if (name === 'ul' || name === 'ol' || name === 'menu' || name === 'dir') {
      this.flush();
      if (this.lists.length === 0) this.outermostLists++;
      this.lists.push({ ordered: name === 'ol', count: 0, item: null });
      this.item = null;
    } else if (name === 'li') {
      this.flush();
      const list = this.lists[this.lists.length - 1];
      if (list) list.count++;
      this.item = { depth: Math.max(0, this.lists.length - 1), ordered: list?.ordered ?? false, index: list?.count ?? 1, continued: false };
      if (list) list.item = this.item;
    } else if (HEADINGS.has(name)) {
      this.flush();
      this.heading = true;
    } else if (name === 'table') {
      this.endRow();
      this.flush();
      this.tables++;
    } else if (name === 'tr') {
      this.endRow();
      this.flush();
      this.row = [];
    } else if (name === 'td' || name === 'th') {
      this.endCell();
      if (!this.row) {
        this.flush();
        this.row = [];
      }
      this.cell = [];
    } else if (BLOCKS.has(name)) {
      // Inside a cell a block only separates words; elsewhere it separates blocks.
      if (this.cell) this.softBreak();
      else this.flush();
    }
  }

  close(name: string): void {
    if (name === 'ul' || name === 'ol' || name === 'menu' || name === 'dir') {
      this.flush();
      this.lists.pop();
      this.item = this.lists[this.lists.length - 1]?.item ?? null;
    } else if (name === 'li') {
      this.flush();
      const list = this.lists[this.lists.length - 1];
      if (list) list.item = null;
      this.item = null;
    } else if (HEADINGS.has(name)) {
      this.flush();
      this.heading = false;
    } else if (name === 'td' || name === 'th') {
      this.endCell();
    } else if (name === 'tr' || name === 'table' || name === 'thead' || name === 'tbody' || name === 'tfoot') {
      this.endRow();
    } else if (BLOCKS.has(name)) {
      if (this.cell) this.softBreak();
      else this.flush();
    }
  }

  private endCell(): void {
    if (!this.cell) return;
    this.lineBreak();
    this.cell.push(...this.lines);
    this.lines = [];
    this.row?.push(this.cell.join(' '));
    this.cell = null;
  }

  private endRow(): void {
    this.endCell();
    if (!this.row) return;
    // Text in a row outside any cell is a cell of its own.
    this.lineBreak();
    if (this.lines.length > 0) this.row.push(this.lines.join(' '));
    this.lines = [];
    if (this.row.some((cell) => cell !== '')) this.blocks.push({ kind: 'row', cells: this.row, table: Math.max(1, this.tables) });
    this.row = null;
  }

  finish(): TextBlock[] {
    this.endRow();
    this.flush();
    return this.blocks;
  }
}

/**
 * The one HTML-to-text routine: merchant markup as blocks of plain text. Paragraphs, line breaks,
 * list items (with their nesting), headings and table cells keep their boundaries; inline tags add
 * nothing (so `seam-sealed</strong>,` stays `seam-sealed,`); entities are decoded once; whitespace is
 * collapsed; script/style content and comments are dropped; control characters removed. `meter`
 * counts the scanner's work (see ScanMeter).
 */
export function htmlToBlocks(html: string, meter?: ScanMeter): TextBlock[] {
  const builder = new BlockBuilder();
  scanMarkup(html, builder, meter);
  return builder.finish();
}

const blockText = (block: TextBlock): string => (block.kind === 'row' ? block.cells.join(' | ') : block.text);

/** Blocks as plain text: one line per paragraph line, heading, list item or table row (cells joined by ` | `). */
export function blocksToText(blocks: TextBlock[]): string {
  return blocks.map(blockText).join('\n');
}

/** Readable text of markup, one line per block (see `htmlToBlocks`). */
export function htmlToPlainText(html: string): string {
  return blocksToText(htmlToBlocks(html));
}

/** Markup as one line of text (questions, summaries, highlights, attribute names and values). */
export function htmlToLine(html: string): string {
  return htmlToBlocks(html)
    .map((block) => blockText(block).replaceAll('\n', ' '))
    .join(' ');
}
