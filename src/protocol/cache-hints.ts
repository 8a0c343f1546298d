// SEP-2549 cache hints put on every cacheable result.
export interface CacheHints {
  ttlMs: number;
  cacheScope: 'public' | 'private';
}
