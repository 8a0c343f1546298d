// A token store in memory: sign-ins last as long as the process.
import type { SignInRecord, TokenStore } from './types.js';

export function createMemoryTokenStore(): TokenStore {
  const records = new Map<string, SignInRecord>();
  return {
    get: async (resource) => {
      const record = records.get(resource);
      return record === undefined ? undefined : structuredClone(record);
    },
    set: async (record) => {
      records.set(record.resource, structuredClone(record));
    },
    delete: async (resource) => {
      records.delete(resource);
    },
    list: async () => [...records.values()].map((r) => structuredClone(r)),
  };
}
