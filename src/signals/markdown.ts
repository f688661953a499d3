import { stripControlCharacters } from '../lib/html.ts';

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
