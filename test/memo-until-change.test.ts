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
});
