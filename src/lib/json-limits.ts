import { ApiError } from './errors.ts';

// Structure limits on JSON bodies, checked over the raw bytes before JSON.parse sees them: the scan
// is one pass with a fixed-size stack, so a hostile body costs time proportional to its bytes and is
// refused before parsing (JSON.parse recurses per nesting level) or normalisation (which walks
// every value) could spend more.

export interface JsonLimits {
  /** Most containers (objects and arrays) open at once. */
  depth: number;
  /** Most values (containers, strings, numbers, literals; keys not counted). */
  values: number;
}

/** Every JSON body svc parses: scans, bulk items (each on its own), admin bodies. */
export const JSON_LIMITS: JsonLimits = { depth: 32, values: 20_000 };
/**
 * Webhook deliveries: the same depth, more values. They are signed by the platform (checked before
 * parsing), and a product with a couple of thousand variants legitimately carries ~60,000 values.
 */
export const WEBHOOK_JSON_LIMITS: JsonLimits = { depth: 32, values: 200_000 };

export type JsonLimitBreach = { limit: 'depth' | 'values'; /** Index of the item that broke it, in item mode. */ item: number | null };

const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;

/** What the next significant byte may be. */
const EXPECT_VALUE = 0;
const EXPECT_KEY = 1;
const AFTER_VALUE = 2;

/**
 * A resumable pass over JSON bytes that counts nesting and values without building anything.
 * It does not validate (JSON.parse does, afterwards, on bytes that passed); invalid JSON only ever
 * stops it early or lets it finish, never makes it slower. UTF-8 continuation bytes are all >= 0x80,
 * so they never look like the ASCII structure it reads.
 *
 * Item mode (`itemDepth`): every value directly inside a container at that depth (the scans of
 * `{"scans":[...]}` are at depth 2) is an item. Its byte span is recorded, and the limits apply to
 * each item on its own (depth counted from the item, values per item) instead of to the whole body.
 */
export class JsonStructureScan {
  position = 0;
  breach: JsonLimitBreach | null = null;
  /** Item mode: an item started after `maxItems` of them (the scan stopped there). */
  tooManyItems = false;
  /** Item mode: [start, end) byte offsets of each item, in order. */
  readonly items: [number, number][] = [];
  /**
   * Item mode: the items whose keys the scan could not clear of reserved names (checkReservedKeys
   * must look at them); every other item provably has none.
   */
  readonly unclearedItems = new Set<number>();
  /** Whether a key so far (of the current item, in item mode) may be a reserved name: see clearsKeys. */
  private keyInDoubt = false;
  /** The first backslash at or after the last offset asked about (-1: none left), found natively. */
  private nextBackslash = -2;
  private depth = 0;
  private values = 0;
  private expect = EXPECT_VALUE;
  private inString = false;
  private escaped = false;
  /** 1 for an open object, 0 for an array, per depth; never deeper than the limit allows. */
  private readonly objects: Uint8Array;
  private itemStart = -1;
  private readonly maxDepth: number;

  constructor(
    private readonly bytes: Uint8Array,
    private readonly limits: JsonLimits,
    private readonly itemDepth: number | null = null,
    /** Item mode: stop (without a breach) when one more item than this starts. */
    private readonly maxItems = Infinity,
  ) {
    this.maxDepth = limits.depth + (itemDepth ?? 0);
    this.objects = new Uint8Array(this.maxDepth + 1);
  }

  /**
   * Whether the scanned bytes provably hold no reserved key (whole-body mode): no key spells one,
   * no key was cut by a slice end, and no byte is a backslash (an escape could spell one, or make
   * checkReservedKeys' text pass see a key where there is none, which must stay refused alike).
   */
  get clearsKeys(): boolean {
    return !this.keyInDoubt && !this.backslashBetween(0, this.bytes.length);
  }

  get done(): boolean {
    return this.breach !== null || this.tooManyItems || this.position >= this.bytes.length;
  }

  /** Scan up to byte `end` (or the first breach). */
  advance(end: number): void {
    const bytes = this.bytes;
    const stop = Math.min(end, bytes.length);
    let i = this.position;
    if (this.inString) i = this.skipString(i, stop);
    for (; i < stop; i++) {
      const byte = bytes[i]!;
      if (byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09) continue;
      switch (byte) {
        case COMMA:
          if (this.depth === this.itemDepth) this.endItem(i);
          this.expect = this.objects[this.depth] === 1 ? EXPECT_KEY : EXPECT_VALUE;
          continue;
        case COLON:
          this.expect = EXPECT_VALUE;
          continue;
        case CLOSE_OBJECT:
        case CLOSE_ARRAY:
          if (this.depth === this.itemDepth) this.endItem(i);
          if (this.depth > 0) this.depth--;
          this.expect = AFTER_VALUE;
          continue;
        case QUOTE:
          if (this.expect === EXPECT_KEY) {
            this.expect = AFTER_VALUE;
            const end = this.skipString(i + 1, stop);
            if (this.inString || isReservedKey(bytes, i + 1, end - 1)) this.keyInDoubt = true;
            i = end - 1;
            continue;
          }
      }
      if (this.expect !== EXPECT_VALUE) continue; // the rest of a number or literal
      if (!this.countValue(i)) {
        i++;
        break;
      }
      if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
        if (++this.depth > this.maxDepth) {
          this.breach = { limit: 'depth', item: this.itemIndex() };
          i++;
          break;
        }
        this.objects[this.depth] = byte === OPEN_OBJECT ? 1 : 0;
        this.expect = byte === OPEN_OBJECT ? EXPECT_KEY : EXPECT_VALUE;
      } else {
        this.expect = AFTER_VALUE;
        if (byte === QUOTE) i = this.skipString(i + 1, stop) - 1;
      }
    }
    this.position = i;
  }

  /**
   * From inside a string at `from`: the offset just past its closing quote, or `stop` (still inside
   * it, to resume there). Finds quotes with the native indexOf; a quote after an odd run of
   * backslashes is escaped.
   */
  private skipString(from: number, stop: number): number {
    const bytes = this.bytes;
    let i = from;
    if (this.escaped) {
      this.escaped = false;
      i++;
    }
    for (;;) {
      const quote = bytes.indexOf(QUOTE, i);
      if (quote === -1 || quote >= stop) {
        // Resume later: remember whether the slice ended on an unfinished escape.
        this.inString = true;
        let backslashes = 0;
        for (let j = stop - 1; j >= i && bytes[j] === BACKSLASH; j--) backslashes++;
        this.escaped = backslashes % 2 === 1;
        return Math.max(stop, i);
      }
      let backslashes = 0;
      for (let j = quote - 1; j >= i && bytes[j] === BACKSLASH; j--) backslashes++;
      if (backslashes % 2 === 0) {
        this.inString = false;
        return quote + 1;
      }
      i = quote + 1;
    }
  }

  /** A value starts at byte `at`: count it (per item in item mode); false to stop the scan. */
  private countValue(at: number): boolean {
    if (this.itemDepth !== null) {
      if (this.depth === this.itemDepth) {
        if (this.items.length === this.maxItems) {
          this.tooManyItems = true;
          return false;
        }
        this.itemStart = at;
        this.values = 0;
        this.keyInDoubt = false;
      } else if (this.depth < this.itemDepth) {
        return true; // the envelope around the items
      }
    }
    if (++this.values > this.limits.values) {
      this.breach = { limit: 'values', item: this.itemIndex() };
      return false;
    }
    return true;
  }

  private endItem(at: number): void {
    if (this.itemStart >= 0) {
      if (this.keyInDoubt || this.backslashBetween(this.itemStart, at)) this.unclearedItems.add(this.items.length);
      this.items.push([this.itemStart, at]);
    }
    this.itemStart = -1;
  }

  /** Whether a backslash lies in [start, end); asked with ascending starts, so each is found once. */
  private backslashBetween(start: number, end: number): boolean {
    if (this.nextBackslash !== -1 && this.nextBackslash < start) this.nextBackslash = this.bytes.indexOf(BACKSLASH, start);
    return this.nextBackslash !== -1 && this.nextBackslash < end;
  }

  private itemIndex(): number | null {
    return this.itemDepth === null ? null : this.items.length;
  }
}

/** 400 naming the limit a body (or its item `breach.item`, in the array named `items`) broke. */
export function jsonLimitError(breach: JsonLimitBreach, limits: JsonLimits, items = 'items'): ApiError {
  const where = breach.item === null ? 'the JSON body' : `${items}[${breach.item}]`;
  return breach.limit === 'depth'
    ? new ApiError(400, 'json_too_deep', `${where} nests objects and arrays more than ${limits.depth} levels deep (the limit)`, {}, { limit: limits.depth })
    : new ApiError(400, 'json_too_many_values', `${where} holds more than ${limits.values} JSON values (the limit)`, {}, { limit: limits.values });
}

/**
 * Refuse bytes whose structure breaks `limits` (400), in one linear pass; for bodies up to a few MiB.
 * True when the pass also cleared the keys: checkReservedKeys need not look (JsonStructureScan.clearsKeys).
 */
export function checkJsonStructure(bytes: Uint8Array, limits: JsonLimits = JSON_LIMITS): boolean {
  const scan = new JsonStructureScan(bytes, limits);
  scan.advance(bytes.length);
  if (scan.breach) throw jsonLimitError(scan.breach, limits);
  return scan.clearsKeys;
}

/**
 * Keys that name a property every plain object inherits (`__proto__`, `constructor`, `toString`,
 * ...) or `prototype`. JSON.parse keeps them as own keys, but code that treats a payload as a plain
 * object can trip over them (`obj.toString` no longer a function makes string conversion throw;
 * assigning `__proto__` re-parents an object), so no JSON body may carry them: 400 instead.
 */
const RESERVED_KEYS = new Set([...Object.getOwnPropertyNames(Object.prototype), 'prototype']);
const RESERVED_KEY_TEXT = new RegExp(`"(${[...RESERVED_KEYS].join('|')})"\\s*:`);
/** The reserved keys as ASCII bytes, by length (the structure scan compares each key's bytes). */
const RESERVED_KEY_BYTES: Uint8Array[][] = [];
const RESERVED_KEY_FIRST_BYTES = new Uint8Array(256);
for (const key of RESERVED_KEYS) {
  (RESERVED_KEY_BYTES[key.length] ??= []).push(new TextEncoder().encode(key));
  RESERVED_KEY_FIRST_BYTES[key.charCodeAt(0)] = 1;
}

/** Whether bytes [start, end) (a key without its quotes) spell a reserved key as is. */
function isReservedKey(bytes: Uint8Array, start: number, end: number): boolean {
  if (RESERVED_KEY_FIRST_BYTES[bytes[start]!] === 0) return false;
  const candidates = RESERVED_KEY_BYTES[end - start];
  if (candidates === undefined) return false;
  next: for (const name of candidates) {
    for (let i = 0; i < name.length; i++) if (bytes[start + i] !== name[i]) continue next;
    return true;
  }
  return false;
}

/** The first reserved key anywhere in `value` (a parsed JSON value), or null. */
function reservedKeyIn(value: unknown): string | null {
  if (typeof value !== 'object' || value === null) return null;
  if (Array.isArray(value)) {
    for (const item of value) {
      const found = reservedKeyIn(item);
      if (found !== null) return found;
    }
    return null;
  }
  for (const key of Object.keys(value)) {
    if (RESERVED_KEYS.has(key)) return key;
    const found = reservedKeyIn((value as Record<string, unknown>)[key]);
    if (found !== null) return found;
  }
  return null;
}

/**
 * 400 `reserved_key` when the JSON `text` (already parsed into `value`) has a reserved key anywhere.
 * One regular-expression pass over the text; only text with `\u` escapes (which could spell a key
 * the pass cannot see) has its parsed keys walked, bounded by the value limit.
 */
export function checkReservedKeys(text: string, value: unknown): void {
  const found = RESERVED_KEY_TEXT.exec(text)?.[1] ?? (text.includes('\\u') ? reservedKeyIn(value) : null);
  if (found === null) return;
  throw new ApiError(400, 'reserved_key', `the key ${JSON.stringify(found)} is not accepted anywhere in a JSON body (it names a property every object inherits)`, {}, { key: found });
}
