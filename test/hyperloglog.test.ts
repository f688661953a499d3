import { describe, expect, test } from 'bun:test';
import { HyperLogLog } from '../src/lib/hyperloglog.ts';

const sketchOf = (from: number, to: number) => {
  const sketch = new HyperLogLog();
  for (let i = from; i < to; i++) sketch.add(`shop-${i}.example.com`);
  return sketch;
};

describe('HyperLogLog hostname sketch (distinctHostnames)', () => {
  test('estimates are within 5% of the exact distinct count (typical error 1.6%) from 10 to 200,000 values', () => {
    expect(new HyperLogLog().estimate()).toBe(0);
    for (const n of [10, 100, 1_000, 5_000, 20_000, 200_000]) {
      const estimate = sketchOf(0, n).estimate();
      expect(Math.abs(estimate - n) / n, `n=${n} estimate=${estimate}`).toBeLessThan(0.05);
    }
  });

  test('small counts are exact through linear counting', () => {
    for (const n of [1, 2, 7, 50]) expect(sketchOf(0, n).estimate()).toBe(n);
  });

  test('adding a value again changes nothing', () => {
    const sketch = sketchOf(0, 300);
    const before = sketch.encode();
    for (let i = 0; i < 300; i++) sketch.add(`shop-${i}.example.com`);
    expect(sketch.encode()).toEqual(before);
  });

  test('merging overlapping sketches gives the sketch of the union', () => {
    for (const [a, b] of [[400, 900], [3_000, 9_000]] as const) {
      const merged = sketchOf(0, a);
      merged.mergeEncoded(sketchOf(a / 2, b).encode());
      expect(merged.encode()).toEqual(sketchOf(0, b).encode());
    }
  });

  test('sparse while small, dense when large, and both round-trip through encode/decode', () => {
    const small = sketchOf(0, 100);
    const large = sketchOf(0, 50_000);
    expect(small.encode().length).toBeLessThan(400);
    expect(large.encode().length).toBe(4097);
    for (const sketch of [small, large]) {
      const decoded = HyperLogLog.decode(sketch.encode());
      expect(decoded.encode()).toEqual(sketch.encode());
      expect(decoded.estimate()).toBe(sketch.estimate());
    }
    expect(() => HyperLogLog.decode(new Uint8Array([9]))).toThrow();
  });
});
