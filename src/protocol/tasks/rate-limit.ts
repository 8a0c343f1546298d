// Per-principal token buckets (e.g. for tasks/get polling); bounded memory, idle buckets dropped.

export interface RateLimiter {
  /** Takes one token for `key`; returns 0 when allowed, or the milliseconds until a token is available. */
  take(key: string, now: number): number;
}

export function createRateLimiter(ratePerSecond: number, burst: number, maxKeys = 100_000): RateLimiter {
  const buckets = new Map<string, { tokens: number; at: number }>();
  const perMs = ratePerSecond / 1000;
  return {
    take(key, now) {
      let b = buckets.get(key);
      if (b === undefined) {
        if (buckets.size >= maxKeys) {
          // Drop the oldest entry (Map keeps insertion order): memory stays bounded under many principals.
          const oldest = buckets.keys().next().value;
          if (oldest !== undefined) buckets.delete(oldest);
        }
        b = { tokens: burst, at: now };
        buckets.set(key, b);
      }
      b.tokens = Math.min(burst, b.tokens + (now - b.at) * perMs);
      b.at = now;
      if (b.tokens >= 1) {
        b.tokens -= 1;
        return 0;
      }
      return Math.ceil((1 - b.tokens) / perMs);
    },
  };
}
