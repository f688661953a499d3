import { describe, expect, test } from 'bun:test';
import { createDerivedTexts } from '../src/catalog/derived-texts.ts';

// The memo the catalogue keeps of description texts (src/catalog/derived-texts.ts): bounded memory
// whatever the deliveries bring, and an answer only for the markup it was derived from.
describe('description texts kept in memory', () => {
  test('empty descriptions still count: the number of entries never passes its cap', () => {
    const texts = createDerivedTexts({ entries: 100, cost: 1_000_000 });
    for (let i = 0; i < 10_000; i++) texts.remember(`store\n${i}`, '', '');
    expect(texts.held.entries).toBe(100);
    // The oldest went first: the newest are still there.
    expect(texts.get('store\n9999', '')).toBe('');
    expect(texts.get('store\n0', '')).toBeUndefined();
  });

  test('the characters held (with a fixed cost per entry) never pass the budget, oldest out first', () => {
    const texts = createDerivedTexts({ entries: 1_000_000, cost: 10_000 });
    for (let i = 0; i < 1_000; i++) {
      texts.remember(`store\n${i}`, `<p>${'x'.repeat(200)}</p>`, 'x'.repeat(200));
      expect(texts.held.cost).toBeLessThanOrEqual(10_000);
    }
    expect(texts.held.entries).toBeGreaterThan(0);
    expect(texts.get('store\n999', `<p>${'x'.repeat(200)}</p>`)).toBe('x'.repeat(200));
    expect(texts.get('store\n0', `<p>${'x'.repeat(200)}</p>`)).toBeUndefined();
  });

  test('a text is given back only for the markup it was derived from', () => {
    const texts = createDerivedTexts({ entries: 10, cost: 10_000 });
    texts.remember('store\n1', '<p>One</p>', 'One');
    expect(texts.get('store\n1', '<p>One</p>')).toBe('One');
    expect(texts.get('store\n1', '<p>Two</p>')).toBeUndefined();
    expect(texts.get('store\n2', '<p>One</p>')).toBeUndefined();
    texts.remember('store\n1', '<p>Two</p>', 'Two');
    expect(texts.get('store\n1', '<p>One</p>')).toBeUndefined();
    expect(texts.held).toEqual({ entries: 1, cost: 'store\n1'.length + '<p>Two</p>'.length + 'Two'.length + 64 });
  });

  test('a description over a sixteenth of the budget is not kept, and the older text of that product goes too', () => {
    const texts = createDerivedTexts({ entries: 10, cost: 1_600 });
    texts.remember('store\n1', '<p>Short</p>', 'Short');
    texts.remember('store\n1', `<p>${'x'.repeat(100)}</p>`, 'x'.repeat(100));
    expect(texts.get('store\n1', '<p>Short</p>')).toBeUndefined();
    expect(texts.get('store\n1', `<p>${'x'.repeat(100)}</p>`)).toBeUndefined();
    expect(texts.held).toEqual({ entries: 0, cost: 0 });
  });
});
