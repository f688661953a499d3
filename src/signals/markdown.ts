import { stripControlCharacters, type TextBlock } from '../lib/html.ts';

/**
 * Merchant text as one inert line of Markdown: control characters and line breaks removed, every
 * character that can start markup (links, images, emphasis, code, HTML, entities, tables) backslash-
 * escaped, block starters at the line start neutralised, and bare URLs broken so GFM autolinking
 * cannot turn them into links.
 */
export function markdownText(text: string): string {
  return stripControlCharacters(text)
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/[\\`*_{}[\]()<>#!|~&"]/g, '\\$&')
    .replace(/^[-+=]/, '\\$&')
    .replace(/^(\d+)([.)])(?=\s|$)/, '$1\\$2')
    .replace(/:\/\//g, ':\\/\\/')
    .replace(/\bwww\./gi, (www) => `${www.slice(0, 3)}\\.`);
}

/** A link destination Markdown cannot break out of: an absolute http(s) URL inside `<...>` (its `<`, `>` and spaces are percent-encoded). */
export function markdownUrl(href: string): string {
  return `<${href.replace(/[<>\s]/g, encodeURIComponent)}>`;
}

/** Lines of one text block kept as hard line breaks (a trailing backslash), each line escaped on its own. */
const withBreaks = (text: string, indent: string) => text.split('\n').map(markdownText).join(`\\\n${indent}`);

/** Four spaces per nesting level: deeper than any list marker svc writes (`- `, `12. `), so CommonMark nests it. */
const INDENT = '    ';

function table(rows: string[][]): string[] {
  const width = Math.max(...rows.map((cells) => cells.length));
  const line = (cells: string[]) => `| ${Array.from({ length: width }, (_, i) => markdownText(cells[i] ?? '')).join(' | ')} |`;
  return [line(rows[0]!), `|${' --- |'.repeat(width)}`, ...rows.slice(1).map(line)];
}

/**
 * Text blocks (lib/html.ts) as Markdown: paragraphs, `- item` / `1. item` lists nested by depth,
 * headings as bold lines (the document's own headings stay the only headings), tables as GFM tables.
 * All merchant text goes through `markdownText`, so none of it can become markup.
 */
export function markdownBlocks(blocks: TextBlock[]): string {
  const parts: string[] = [];
  let previous: TextBlock | null = null;
  for (let i = 0; i < blocks.length; i++) {
    const block = blocks[i]!;
    // Items of one list and rows of one table stay together; everything else is its own paragraph.
    const sameGroup =
      previous !== null &&
      ((previous.kind === 'item' && block.kind === 'item' && previous.list === block.list) || (previous.kind === 'row' && block.kind === 'row' && previous.table === block.table));
    if (block.kind === 'row' && sameGroup) continue;
    if (parts.length > 0) parts.push(sameGroup ? '\n' : '\n\n');
    if (block.kind === 'item') {
      const indent = INDENT.repeat(block.depth);
      const marker = block.ordered ? `${block.index}.` : '-';
      parts.push(`${indent}${marker} ${withBreaks(block.text, `${indent}${INDENT}`)}`);
    } else if (block.kind === 'row') {
      const rows: string[][] = [];
      for (let j = i; j < blocks.length; j++) {
        const next = blocks[j]!;
        if (next.kind !== 'row' || next.table !== block.table) break;
        rows.push(next.cells);
      }
      parts.push(table(rows).join('\n'));
    } else if (block.kind === 'heading') {
      parts.push(`**${markdownText(block.text)}**`);
    } else {
      // A paragraph that continues a list item is indented to stay inside it.
      const indent = block.itemDepth === undefined ? '' : INDENT.repeat(block.itemDepth + 1);
      parts.push(`${indent}${withBreaks(block.text, indent)}`);
    }
    previous = block;
  }
  return parts.join('');
}
