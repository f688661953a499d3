/** Injected time source, so tests can pin "now" (rate limits, replay windows, retention). */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock tests move by hand. */
export function fixedClock(start: number): Clock & { set(ms: number): void; advance(ms: number): void } {
  let current = start;
  return {
    now: () => current,
    set: (ms) => {
      current = ms;
    },
    advance: (ms) => {
      current += ms;
    },
  };
}
