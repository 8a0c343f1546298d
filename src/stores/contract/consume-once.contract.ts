// The TaskStore contract: one-time keys (used MRTR requestState), recorded once across instances, swept on expiry.
import { describe, expect, it } from 'vitest';
import { T0, type ContractStore } from './harness.contract.js';

export function consumeOnceContract(h: ContractStore): void {
  describe('consumeOnce', () => {
    it('records a key once: the first call wins, later ones are refused, other keys are apart', async () => {
      expect(await h.store.consumeOnce('request-state:a', T0 + 60_000)).toBe(true);
      expect(await h.store.consumeOnce('request-state:a', T0 + 60_000)).toBe(false);
      expect(await h.store.consumeOnce('request-state:a', T0 + 120_000)).toBe(false);
      expect(await h.store.consumeOnce('request-state:b', T0 + 60_000)).toBe(true);
    });

    it('lets exactly one of concurrent calls, here and on a second instance, record a key', async () => {
      const peer = h.openPeer === undefined ? h.store : await h.openPeer();
      try {
        const won = await Promise.all(
          Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? h.store : peer).consumeOnce('k', T0 + 60_000)),
        );
        expect(won.filter(Boolean)).toHaveLength(1);
        expect(await peer.consumeOnce('k', T0 + 60_000)).toBe(false);
      } finally {
        if (peer !== h.store) await peer.close();
      }
    });

    it('keeps a key until its expiry; purge then deletes it (and counts only tasks)', async () => {
      expect(await h.store.consumeOnce('short', T0 + 1_000)).toBe(true);
      expect(await h.store.consumeOnce('long', T0 + 10_000)).toBe(true);
      expect(await h.store.purge(T0 + 999, 0)).toBe(0);
      expect(await h.store.consumeOnce('short', T0 + 1_000)).toBe(false);
      expect(await h.store.purge(T0 + 1_000, 0)).toBe(0);
      // Swept: the key could be recorded again (a state past its expiry is refused before it gets here).
      expect(await h.store.consumeOnce('short', T0 + 1_000)).toBe(true);
      expect(await h.store.consumeOnce('long', T0 + 10_000)).toBe(false);
    });
  });
}
