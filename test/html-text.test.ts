import { describe, expect, test } from 'bun:test';
import { blocksToText, htmlToBlocks, htmlToLine, htmlToPlainText, sanitizeBasicHtml, type ScanMeter } from '../src/lib/html.ts';
import { markdownBlocks } from '../src/signals/markdown.ts';

const markdown = (html: string) => markdownBlocks(htmlToBlocks(html));

describe('HTML to text: block-aware boundaries', () => {
  test('inline tags add no space, so punctuation after an inline tag stays attached', () => {
    expect(htmlToPlainText('<p>Shell is <strong>seam-sealed</strong>, 3-layer and <em>breathable</em>.</p>')).toBe('Shell is seam-sealed, 3-layer and breathable.');
    expect(htmlToPlainText('<p>Re<b>cycled</b> (<i>mostly</i>)!</p>')).toBe('Recycled (mostly)!');
  });

  test('an image between words separates them, but not from the punctuation after it', () => {
    expect(htmlToPlainText('<p>Logo<img src="x.png">here<img src="y.png">, done</p>')).toBe('Logo here, done');
  });

  test('paragraphs, line breaks, headings and list items each start a new line', () => {
    const html = '<h2>Features</h2><p>Line one<br>line two</p><ul><li>Waterproof rating</li><li>Pit zips</li></ul><div>After</div>';
    expect(htmlToPlainText(html)).toBe('Features\nLine one\nline two\nWaterproof rating\nPit zips\nAfter');
    expect(htmlToBlocks(html).map((b) => b.kind)).toEqual(['heading', 'paragraph', 'item', 'item', 'paragraph']);
  });

  test('list items and paragraphs whose end tags are omitted (as HTML allows) still separate', () => {
    expect(htmlToPlainText('<ul><li>Waterproof rating<li>Pit zips</ul><p>One<p>Two')).toBe('Waterproof rating\nPit zips\nOne\nTwo');
  });

  test('nested lists keep their depth, and text after a nested list continues its item', () => {
    const blocks = htmlToBlocks('<ul><li>Outer<ol><li>First</li><li>Second</li></ol>more outer</li><li>Next</li></ul>');
    expect(blocks).toEqual([
      { kind: 'item', text: 'Outer', depth: 0, ordered: false, index: 1, list: 1 },
      { kind: 'item', text: 'First', depth: 1, ordered: true, index: 1, list: 1 },
      { kind: 'item', text: 'Second', depth: 1, ordered: true, index: 2, list: 1 },
      { kind: 'paragraph', text: 'more outer', itemDepth: 0 },
      { kind: 'item', text: 'Next', depth: 0, ordered: false, index: 2, list: 1 },
    ]);
  });

  test('table cells are separated and each row is a line', () => {
    const html = '<table><thead><tr><th>Size</th><th>Chest</th></tr></thead><tbody><tr><td>S</td><td>90 <b>cm</b></td></tr><tr><td>M</td><td><p>96</p><p>cm</p></td></tr></tbody></table>';
    expect(htmlToPlainText(html)).toBe('Size | Chest\nS | 90 cm\nM | 96 cm');
  });

  test('entities are decoded exactly once, with the full HTML set of names', () => {
    expect(htmlToPlainText('&amp;lt;b&amp;gt; &copy; 2026 &ndash; caf&eacute; &#x1F600; &hellip;')).toBe('&lt;b&gt; © 2026 – café 😀 …');
    expect(htmlToPlainText('Two&nbsp;&amp;&nbsp;three')).toBe('Two & three');
  });

  test('whitespace is collapsed; script, style and comments are dropped; control characters removed', () => {
    expect(htmlToPlainText('  a \n\t b <script>x()</script><style>p{}</style><!-- c -->\u0001 d ')).toBe('a b d');
  });

  test('one line for short fields: blocks joined by spaces', () => {
    expect(htmlToLine('<p>One</p><ul><li>a</li><li>b</li></ul>')).toBe('One a b');
    expect(htmlToLine('Is it <b>safe</b>?\n\u0001')).toBe('Is it safe?');
  });
});

describe('HTML to Markdown', () => {
  test('lists become "- item" lines (ordered lists numbered), nested four spaces deeper', () => {
    expect(markdown('<p>Care:</p><ul><li>Machine wash cold</li><li>Tumble dry <b>low</b></li></ul><ol><li>One<ul><li>Sub</li></ul></li></ol>')).toBe(
      'Care:\n\n- Machine wash cold\n- Tumble dry low\n\n1. One\n    - Sub',
    );
  });

  test('a line break is a hard break and headings are bold lines (never Markdown headings)', () => {
    expect(markdown('<h1># Big</h1><p>a<br>b</p>')).toBe('**\\# Big**\n\na\\\nb');
  });

  test('a table is a GFM table whose cells cannot break out of their column', () => {
    expect(markdown('<table><tr><th>Size</th><th>Fit</th></tr><tr><td>S</td><td>a | b</td></tr><tr><td>M</td></tr></table>')).toBe(
      '| Size | Fit |\n| --- | --- |\n| S | a \\| b |\n| M |  |',
    );
  });

  test('merchant text inside lists stays escaped', () => {
    expect(markdown('<ul><li>[x](https://evil.test) <img src=x onerror=y></li></ul>')).toBe('- \\[x\\]\\(https:\\/\\/evil.test\\)');
  });
});

/**
 * Linear time on adversarial input (issue 11, item 9): before, 100k `<` or 99 KB of `<a"` took
 * seconds because every `<` rescanned the rest of the input. The meter counts the characters the tag
 * scanner inspects; a quadratic scan of these inputs would count billions.
 */
describe('HTML handling runs in linear time on adversarial input', () => {
  const ADVERSARIAL: [string, (n: number) => string][] = [
    ['`<` repeated', (n) => '<'.repeat(n)],
    ['`<a"` repeated', (n) => '<a"'.repeat(Math.floor(n / 3))],
    ["`<a'\"` repeated", (n) => `<a'"`.repeat(Math.floor(n / 4))],
    ['`<a ` repeated (tags never closed)', (n) => '<a '.repeat(Math.floor(n / 3))],
    ['`<a x="` repeated', (n) => '<a x="'.repeat(Math.floor(n / 6))],
    ['`<p x=\'` then `>` at the very end', (n) => `${"<p x='".repeat(Math.floor(n / 6))}>`],
    ['`<script>` repeated, never closed', (n) => '<script>'.repeat(Math.floor(n / 8))],
    ['`<!--` repeated', (n) => '<!--'.repeat(Math.floor(n / 4))],
    ['`&amp;` repeated', (n) => '&amp;'.repeat(Math.floor(n / 5))],
    ['one link with 25,000 attributes', (n) => `<a${' x=1'.repeat(Math.floor(n / 4))} href="https://example.com/">link</a>`],
  ];

  // The two ways the product reads markup: FAQ answers are sanitized (parsing the attributes of
  // links), descriptions and the rest are converted to text.
  const READERS: [string, (html: string, meter: ScanMeter) => unknown][] = [
    ['sanitizing', sanitizeBasicHtml],
    ['text conversion', htmlToBlocks],
  ];

  for (const [name, make] of ADVERSARIAL) {
    for (const [reader, read] of READERS) {
      test(`${name}: ${reader} inspects at most a few characters per input character`, () => {
        const input = make(100_000);
        const meter: ScanMeter = { steps: 0 };
        read(input, meter);
        expect(meter.steps).toBeLessThanOrEqual(4 * input.length);
      });
    }
  }

  test('2 MB of `<` and of `<a"` are sanitized and converted to text correctly (a quadratic scan would not finish)', () => {
    const n = 2_000_000;
    const lt = '<'.repeat(n);
    expect(sanitizeBasicHtml(lt)).toBe('&lt;'.repeat(n));
    expect(htmlToPlainText(lt)).toBe(lt);
    const quoted = '<a"'.repeat(n / 4);
    // `<a"<a"...`: the first `<a` opens a tag whose quotes never balance to a closing `>`, so every `<` is text.
    expect(sanitizeBasicHtml(quoted)).toBe('&lt;a"'.repeat(n / 4));
    expect(blocksToText(htmlToBlocks(quoted))).toBe(quoted);
  });
});
