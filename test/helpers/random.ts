// A seeded PRNG for randomised tests, so that a failing run can be replayed from its seed.

/** mulberry32: small, fast and good enough to pick test inputs; not for anything secret. */
export function createRandom(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let x = state;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  return { next, pick, int: (n: number) => Math.floor(next() * n), chance: (p: number) => next() < p };
}
