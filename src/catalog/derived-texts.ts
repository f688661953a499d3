/** What an entry costs besides its characters (the Map entry, the record and the key), in characters. */
const ENTRY_OVERHEAD = 64;

/**
 * The text last derived from each product's description markup, by product. The text is a function
 * of the markup alone, so an entry whose markup equals the one asked about is right whatever was
 * written since: nothing to revalidate. Bounded twice, the oldest entries dropped first: at most
 * `entries` of them (however small), and at most `cost` characters of keys, markup and text, with
 * ENTRY_OVERHEAD more per entry.
 */
export function createDerivedTexts(limits: { entries: number; cost: number }) {
  const texts = new Map<string, { html: string; text: string; cost: number }>();
  let cost = 0;
  const drop = (key: string, entry: { cost: number }) => {
    texts.delete(key);
    cost -= entry.cost;
  };
  return {
    /** The text derived from `html` for `key`, if that is the markup last remembered for it. */
    get(key: string, html: string): string | undefined {
      const entry = texts.get(key);
      return entry !== undefined && entry.html === html ? entry.text : undefined;
    },
    remember(key: string, html: string, text: string): void {
      const entryCost = key.length + html.length + text.length + ENTRY_OVERHEAD;
      const old = texts.get(key);
      if (old) drop(key, old);
      // One entry may take at most a sixteenth of the budget: a huge description never empties it.
      if (entryCost > limits.cost / 16) return;
      texts.set(key, { html, text, cost: entryCost });
      cost += entryCost;
      for (const [oldest, entry] of texts) {
        if (texts.size <= limits.entries && cost <= limits.cost) break;
        drop(oldest, entry);
      }
    },
    /** Entries and characters held (for tests). */
    get held(): { entries: number; cost: number } {
      return { entries: texts.size, cost };
    },
  };
}
