// What each owner holds open at once (event streams), capped per owner and, optionally, in all: one caller cannot
// take every slot of a process, nor many callers together more than the process sets aside for such streams.

export type OpenOutcome =
  | { ok: true; release: () => void }
  /** Which cap is reached: the owner's own, or the one of all owners together. */
  | { ok: false; cap: 'owner' | 'total'; limit: number };

export interface OpenLimit {
  /** Holds one more for `key` (an owner key): its release (safe to call twice), or the cap that refuses it. */
  open(key: string): OpenOutcome;
}

export function createOpenLimit(perOwner: number, total = Infinity): OpenLimit {
  const held = new Map<string, number>();
  let all = 0;
  return {
    open(key) {
      const n = held.get(key) ?? 0;
      if (n >= perOwner) return { ok: false, cap: 'owner', limit: perOwner };
      if (all >= total) return { ok: false, cap: 'total', limit: total };
      held.set(key, n + 1);
      all += 1;
      let released = false;
      return {
        ok: true,
        release: () => {
          if (released) return;
          released = true;
          all -= 1;
          const left = (held.get(key) ?? 1) - 1;
          if (left === 0) held.delete(key);
          else held.set(key, left);
        },
      };
    },
  };
}
