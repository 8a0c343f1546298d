// A token bucket per client address, for the unauthenticated callback route: `perSecond` requests on average, up to
// `burst` at once. Bounded: past MAX_CLIENTS addresses the full buckets are dropped first (they hold no debt), then
// all, so a flood of addresses costs memory only up to the bound.

/** The most client addresses tracked at once. */
export const MAX_CLIENTS = 10_000;

export interface ClientBuckets {
  /** Takes a token for `client` at `now`: undefined when it had one, or the ms until it will. */
  take(client: string, now: number): number | undefined;
}

export function createClientBuckets(perSecond: number, burst: number): ClientBuckets {
  const buckets = new Map<string, { tokens: number; at: number }>();
  const refill = (b: { tokens: number; at: number }, now: number): void => {
    b.tokens = Math.min(burst, b.tokens + (Math.max(0, now - b.at) * perSecond) / 1000);
    b.at = now;
  };
  const prune = (now: number): void => {
    for (const [key, b] of buckets) {
      refill(b, now);
      if (b.tokens >= burst) buckets.delete(key);
    }
    if (buckets.size >= MAX_CLIENTS) buckets.clear();
  };
  return {
    take(client, now) {
      let b = buckets.get(client);
      if (b === undefined) {
        if (buckets.size >= MAX_CLIENTS) prune(now);
        b = { tokens: burst, at: now };
        buckets.set(client, b);
      } else refill(b, now);
      if (b.tokens >= 1) {
        b.tokens -= 1;
        return undefined;
      }
      return Math.ceil(((1 - b.tokens) * 1000) / perSecond);
    },
  };
}
