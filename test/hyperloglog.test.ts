import { describe, expect, test } from 'bun:test';
import { HyperLogLog, hllHash } from '../src/lib/hyperloglog.ts';

const sketchOf = (from: number, to: number) => {
  const sketch = new HyperLogLog();
  for (let i = from; i < to; i++) sketch.add(`shop-${i}.example.com`);
  return sketch;
};

/** The sketch the rollups were written with (register -> rank in a Map, dense past 1365 registers). */
class MapSketch {
    sparse: Map<number, number> | null = new Map();
    dense: Uint8Array | null = null;
    set(index: number, rank: number) {
      if (this.dense) return void (this.dense[index] = Math.max(this.dense[index]!, rank));
      if (rank <= (this.sparse!.get(index) ?? 0)) return;
      this.sparse!.set(index, rank);
      if (this.sparse!.size > 1365) {
        this.dense = new Uint8Array(4096);
        for (const [i, r] of this.sparse!) this.dense[i] = r;
        this.sparse = null;
      }
    }
    merge(bytes: Uint8Array) {
      if (bytes[0] === 2) {
        if (!this.dense) {
          const dense = bytes.slice(1);
          for (const [i, r] of this.sparse!) dense[i] = Math.max(dense[i]!, r);
          this.dense = dense;
          this.sparse = null;
        } else for (let i = 0; i < 4096; i++) this.dense[i] = Math.max(this.dense[i]!, bytes[i + 1]!);
        return;
      }
      for (let at = 1; at + 2 < bytes.length; at += 3) this.set(bytes[at]! | (bytes[at + 1]! << 8), bytes[at + 2]!);
    }
    encode() {
      if (this.dense) return new Uint8Array([2, ...this.dense]);
      const entries = [...this.sparse!].sort((a, b) => a[0] - b[0]);
      return new Uint8Array([1, ...entries.flatMap(([index, rank]) => [index & 0xff, index >>> 8, rank])]);
    }
  }

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

  test('existing rollups decode: the encoding is byte-for-byte the one stored so far, sparse, at the sparse limit and dense', () => {
    // SHA-256 of encode() for shop-0..n-1, recorded with the Map-based sketch the rollups were written with.
    const recorded: [number, number, string][] = [
      [1, 4, 'c678dafd0be4b7a9'], [100, 301, '55f31d79964ee5bc'], [1_000, 2_632, '2fefdb1c1b590bbf'], [1_500, 3_673, '0e351849ea9533d3'],
      [1_700, 4_081, '6f0bef7237611ba4'], [5_000, 4_097, 'dbda653f77814756'], [50_000, 4_097, 'a8c9bd028a7fe867'],
    ];
    for (const [n, length, sha] of recorded) {
      const bytes = sketchOf(0, n).encode();
      expect([n, bytes.length, new Bun.CryptoHasher('sha256').update(bytes).digest('hex').slice(0, 16)]).toEqual([n, length, sha]);
      expect(HyperLogLog.decode(bytes).encode()).toEqual(bytes);
    }
  });

  test('encodes the same bytes as the Map-based sketch for any order of adds and merges, across the switch to dense', () => {
    let seed = 7;
    const random = (below: number) => Math.floor(((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31) * below);
    for (let round = 0; round < 40; round++) {
      const sketch = new HyperLogLog();
      const model = new MapSketch();
      const steps = 1 + random(6);
      for (let step = 0; step < steps; step++) {
        const values = Array.from({ length: random(round % 2 ? 900 : 120) }, () => `host-${random(6_000)}`);
        if (random(2)) {
          for (const value of values) {
            sketch.addHash(hllHash(value));
            const hash = hllHash(value);
            model.set(Math.floor(hash / 64), hash % 64);
          }
        } else {
          const other = new HyperLogLog();
          for (const value of values) other.add(value);
          sketch.mergeEncoded(other.encode());
          model.merge(other.encode());
        }
        expect(sketch.encode()).toEqual(model.encode());
      }
      expect(sketch.estimate()).toBe(HyperLogLog.decode(model.encode()).estimate());
    }
  });

  test('the same bytes as the Map-based sketch one value at a time through the switch to dense, and for merges that cross it', () => {
    const sketch = new HyperLogLog();
    const model = new MapSketch();
    for (let i = 0; model.dense === null || i % 200 !== 0; i++) {
      const hash = hllHash(`shop-${i}.example.com`);
      sketch.addHash(hash);
      model.set(Math.floor(hash / 64), hash % 64);
      if (model.dense === null || i % 100 === 0) expect(sketch.encode()).toEqual(model.encode());
    }
    // Sparse halves whose union sets 1364 to 1367 registers.
    const registers = (from: number, to: number) => new Uint8Array([1, ...Array.from({ length: to - from }, (_, i) => [(from + i) & 0xff, (from + i) >>> 8, 1]).flat()]);
    for (const union of [1_364, 1_365, 1_366, 1_367]) {
      const merged = HyperLogLog.decode(registers(0, 700));
      const expected = new MapSketch();
      expected.merge(registers(0, 700));
      merged.mergeEncoded(registers(650, union));
      expected.merge(registers(650, union));
      expect([union, merged.encode()]).toEqual([union, expected.encode()]);
    }
  });

  test('a sparse merge of entries out of index order, or with a register twice, still takes the larger rank of each register', () => {
    // As many entries as a merge takes in one pass (a few go in one by one) and as few.
    const bytes = (entries: [number, number][]) => new Uint8Array([1, ...entries.flatMap(([index, rank]) => [index & 0xff, index >>> 8, rank])]);
    for (const count of [3, 40]) {
      const sketch = HyperLogLog.decode(bytes(Array.from({ length: count }, (_, i) => [i * 10, 3])));
      const expected = new MapSketch();
      expected.merge(bytes(Array.from({ length: count }, (_, i) => [i * 10, 3])));
      const descending = Array.from({ length: count }, (_, i): [number, number] => [(count - i) * 10 - 5, 2 + (i % 3)]);
      sketch.mergeEncoded(bytes(descending));
      expected.merge(bytes(descending));
      expect([count, sketch.encode()]).toEqual([count, expected.encode()]);
      // A register twice in the bytes: once in the sketch, with the larger rank.
      const twice = Array.from({ length: count }, (_, i): [number, number] => [Math.floor(i / 2) * 10, 1 + (i % 2) * 5]);
      sketch.mergeEncoded(bytes(twice));
      expected.merge(bytes(twice));
      expect([count, sketch.encode()]).toEqual([count, expected.encode()]);
    }
  });
});

