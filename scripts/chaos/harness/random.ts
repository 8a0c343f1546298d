// One seeded generator per section: the seed is printed, decisions are reproducible (timings are not).

export interface Rng {
  next(): number;
  /** An integer in [min, max]. */
  int(min: number, max: number): number;
  pick<T>(items: readonly T[]): T;
  chance(p: number): boolean;
  hex(n?: number): string;
  /** A value drawn by weight from `[value, weight]` pairs. */
  weighted<T>(table: readonly (readonly [T, number])[]): T;
}

export function rng(seed: number): Rng {
  let a = seed >>> 0;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T,
    chance: (p) => next() < p,
    hex: (n = 8) => Array.from({ length: n }, () => Math.floor(next() * 16).toString(16)).join(''),
    weighted<T>(table: readonly (readonly [T, number])[]): T {
      const total = table.reduce((s, [, w]) => s + w, 0);
      let x = next() * total;
      for (const [value, w] of table) {
        x -= w;
        if (x < 0) return value;
      }
      return (table[table.length - 1] as readonly [T, number])[0];
    },
  };
}
