import { describe, expect, test } from 'bun:test';
import { hostAllowed, hostOf } from '../src/faqs/access.ts';
import { sanitizeBasicHtml } from '../src/lib/html.ts';
import { markdownText, markdownUrl } from '../src/signals/markdown.ts';

describe('FAQ answer sanitizer: allowed basic HTML survives', () => {
  test('paragraphs, line breaks, lists and emphasis are kept', () => {
    const html = '<p>One<br>two</p><ul><li><strong>A</strong></li><li><em>B</em> <b>c</b> <i>d</i></li></ul><ol><li>x</li></ol>';
    expect(sanitizeBasicHtml(html)).toBe(html);
  });

  test('a link keeps only an absolute http(s) href, normalised and escaped', () => {
    expect(sanitizeBasicHtml('<a href="https://example.com/a?b=1&amp;c=2" title="t" target="_blank" onclick="x()">shop</a>')).toBe(
      '<a href="https://example.com/a?b=1&#38;c=2">shop</a>',
    );
    expect(sanitizeBasicHtml("<A HREF='http://example.com'>x</A>")).toBe('<a href="http://example.com/">x</a>');
  });

  test('attributes of allowed elements are dropped', () => {
    expect(sanitizeBasicHtml('<p style="color:red" class="x" onmouseover="alert(1)">hi</p>')).toBe('<p>hi</p>');
  });

  test('unclosed allowed elements are closed and stray closing tags ignored', () => {
    expect(sanitizeBasicHtml('<p><strong>bold')).toBe('<p><strong>bold</strong></p>');
    expect(sanitizeBasicHtml('text</p></li>')).toBe('text');
    expect(sanitizeBasicHtml('<ul><li>a</ul>b')).toBe('<ul><li>a</li></ul>b');
  });
});

describe('FAQ answer sanitizer: hostile input is inert', () => {
  const hostile: [string, string][] = [
    ['<script>alert(1)</script>ok', 'ok'],
    ['<SCRIPT type="text/javascript">document.cookie</SCRIPT >ok', 'ok'],
    ['<style>body{display:none}</style>ok', 'ok'],
    ['<img src=x onerror=alert(1)>ok', 'ok'],
    ['<svg onload=alert(1)><circle/></svg>ok', 'ok'],
    ['<iframe src="https://evil.test"></iframe>ok', 'ok'],
    ['<a href="javascript:alert(1)">click</a>', 'click'],
    ['<a href="java&#x09;script:alert(1)">click</a>', 'click'],
    ['<a href="  JaVaScRiPt:alert(1)">click</a>', 'click'],
    ['<a href="data:text/html;base64,PHNjcmlwdD4=">click</a>', 'click'],
    ['<a href="/relative">click</a>', 'click'],
    ['<a href="//evil.test/x">click</a>', 'click'],
    ['<a>no href</a>', 'no href'],
    ['<!-- <script>alert(1)</script> -->ok', 'ok'],
    ['<!DOCTYPE html><?xml x?>ok', 'ok'],
    ['<div onclick="x"><span>nested</span></div>', 'nested'],
    ['a < b and c > d', 'a &lt; b and c &gt; d'],
    ['&lt;script&gt;alert(1)&lt;/script&gt;', '&lt;script&gt;alert(1)&lt;/script&gt;'],
    ['<p title="a>b">x</p>', '<p>x</p>'],
    ['<p x="<script>">y</p>', '<p>y</p>'],
    ['<scr<script>ipt>alert(1)</script>', 'ipt&gt;alert(1)'],
    ['bell\u0007 and nul\u0000 and \u009b csi', 'bell and nul and  csi'],
    ['&#0;&#x110000;&#xD800;x', '\ufffd\ufffd\ufffdx'],
    ['<p', '&lt;p'],
  ];
  for (const [input, expected] of hostile) {
    test(`${JSON.stringify(input)} -> ${JSON.stringify(expected)}`, () => {
      expect(sanitizeBasicHtml(input)).toBe(expected);
    });
  }

  test('no output ever contains a tag outside the allowed set or an attribute other than href', () => {
    const inputs = ['<a href="https://x.test" onclick=1 style=2>a</a><form><input value=1><button>b</button></form><object data=x></object><math><mi>x</mi></math>'];
    for (const input of inputs) {
      const out = sanitizeBasicHtml(input);
      for (const tag of out.matchAll(/<\/?([a-z]+)([^>]*)>/g)) {
        expect(['p', 'br', 'ul', 'ol', 'li', 'strong', 'b', 'em', 'i', 'a']).toContain(tag[1]!);
        expect(tag[2]!.replace(/^ href="https?:\/\/[^"]*"$/, '')).toBe('');
      }
    }
  });
});

describe('Markdown escaping of merchant text', () => {
  test('link, image, HTML and emphasis syntax are escaped', () => {
    expect(markdownText('[click](https://evil.test) ![x](y) <b>hi</b> *a* _b_ `c`')).toBe(
      '\\[click\\]\\(https:\\/\\/evil.test\\) \\!\\[x\\]\\(y\\) \\<b\\>hi\\</b\\> \\*a\\* \\_b\\_ \\`c\\`',
    );
  });

  test('line breaks cannot start new blocks and block starters are neutralised', () => {
    expect(markdownText('line\n# heading\n\n- item')).toBe('line \\# heading - item');
    expect(markdownText('# Title')).toBe('\\# Title');
    expect(markdownText('- item')).toBe('\\- item');
    expect(markdownText('1. first')).toBe('1\\. first');
    expect(markdownText('> quote')).toBe('\\> quote');
  });

  test('bare URLs and www. hosts are broken so they are not autolinked; entities are not decoded', () => {
    expect(markdownText('see http://evil.test or www.evil.test')).toBe('see http:\\/\\/evil.test or www\\.evil.test');
    expect(markdownText('&lt;x&gt;')).toBe('\\&lt;x\\&gt;');
  });

  test('link destinations are wrapped in angle brackets with no way out', () => {
    expect(markdownUrl('https://x.test/a b>c')).toBe('<https://x.test/a%20b%3Ec>');
  });
});

describe('widget origin matching', () => {
  test('host of Origin or Referer ignores the port and the path', () => {
    expect(hostOf('http://localhost:3000')).toBe('localhost');
    expect(hostOf('https://Shop.Example.com/products/x?y')).toBe('shop.example.com');
    expect(hostOf('null')).toBeNull();
    expect(hostOf('file:///etc/passwd')).toBeNull();
    expect(hostOf('chrome-extension://shop.example.com')).toBeNull();
    expect(hostOf('ftp://shop.example.com')).toBeNull();
  });

  test('exact hosts, *. wildcards for subdomains only, and no lookalikes', () => {
    expect(hostAllowed('example.com', ['example.com'])).toBe(true);
    expect(hostAllowed('www.example.com', ['example.com'])).toBe(false);
    expect(hostAllowed('www.example.com', ['*.example.com'])).toBe(true);
    expect(hostAllowed('a.b.example.com', ['*.example.com'])).toBe(true);
    expect(hostAllowed('example.com', ['*.example.com'])).toBe(false);
    expect(hostAllowed('example.com.evil.test', ['example.com', '*.example.com'])).toBe(false);
    expect(hostAllowed('evilexample.com', ['*.example.com'])).toBe(false);
    expect(hostAllowed('shop.example.com.evil.test', ['*.example.com'])).toBe(false);
    expect(hostAllowed('example.com.evil.test', ['*.example.com'])).toBe(false);
    expect(hostAllowed('anything.test', [])).toBe(false);
  });
});
