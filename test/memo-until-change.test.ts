import { describe, expect, test } from 'bun:test';
import { memoUntilChange } from '../src/lib/memo-until-change.ts';

// The memo behind the public badge (src/app.ts): answers kept until the database changes, bounded
// because the arguments (host names) come from clients.
describe('memoUntilChange', () => {
  test('an answer is computed again only after the change stamp moves', () => {
    let stamp = 1;
    const computed: string[] = [];
    const memo = memoUntilChange(() => stamp, 10, (host) => (computed.push(host), host.length));
    expect(memo('a.test')).toBe(6);
    expect(memo('a.test')).toBe(6);
    expect(computed).toEqual(['a.test']);
    stamp = 2;
    memo('a.test');
    expect(computed).toEqual(['a.test', 'a.test']);
  });

  test('at most `limit` answers are kept, the oldest dropped first', () => {
    const computed: string[] = [];
    const memo = memoUntilChange(() => 1, 2, (host) => (computed.push(host), host));
    for (const host of ['a', 'b', 'c', 'c', 'b', 'a']) memo(host);
    expect(computed).toEqual(['a', 'b', 'c', 'a']);
  });

  test('each argument keeps its own answer, and a failed compute is not kept: it is asked again', () => {
    let stamp = 1;
    const computed: string[] = [];
    const memo = memoUntilChange(() => stamp, 10, (host) => {
      computed.push(host);
      if (host === 'bad') throw new Error('bad host');
      return { host };
    });
    const a = memo('a');
    expect(memo('a')).toBe(a);
    expect(memo('b')).toEqual({ host: 'b' });
    expect(() => memo('bad')).toThrow('bad host');
    expect(() => memo('bad')).toThrow('bad host');
    expect(memo('a')).toBe(a);
    expect(memo('b')).toEqual({ host: 'b' });
    expect(computed).toEqual(['a', 'b', 'bad', 'bad']);
    stamp = 2;
    expect(memo('b')).not.toBe(memo('a'));
    expect(computed).toEqual(['a', 'b', 'bad', 'bad', 'b', 'a']);
  });
});

describe('memoUntilChange with answers that come later (storage asked: PostgreSQL)', () => {
  test('an answer that comes with a promise is kept once it has come, only if nothing committed while it was read; a failed one is not kept', async () => {
    let stamp = 1;
    let asked = 0;
    const memo = memoUntilChange(() => stamp, 10, async (host) => {
      asked++;
      if (host === 'bad') throw new Error('bad host');
      return `${host}@${stamp}`;
    });
    const first = memo('a');
    expect(first).toBeInstanceOf(Promise);
    expect(await first).toBe('a@1');
    expect(memo('a')).toBe('a@1');
    expect(asked).toBe(1);
    // A commit while it is read: the answer is given, not kept.
    const during = memo('b');
    stamp = 2;
    // Another request sees the commit first.
    expect(await memo('a')).toBe('a@2');
    expect(await during).toBe('b@1');
    expect(await memo('b')).toBe('b@2');
    expect(memo('b')).toBe('b@2');
    await expect(memo('bad') as Promise<string>).rejects.toThrow('bad host');
    await expect(memo('bad') as Promise<string>).rejects.toThrow('bad host');
    expect(asked).toBe(6);
  });
});
