// Kill hooks: the driver arms one to learn which process a tools/call or tasks/update was just sent to.
import type { Slot } from './cluster.js';

export type HookKind = 'create' | 'update';

export class Hooks {
  private readonly armed: Partial<Record<HookKind, (slot: Slot) => void>> = {};

  /** Resolves with the slot of the next request of that kind, or undefined after `timeoutMs`. */
  arm(kind: HookKind, timeoutMs: number): Promise<Slot | undefined> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.armed[kind] = undefined;
        resolve(undefined);
      }, timeoutMs);
      this.armed[kind] = (slot) => {
        this.armed[kind] = undefined;
        clearTimeout(timer);
        resolve(slot);
      };
    });
  }

  /** A request of that kind was just sent to `slot`. */
  fire(kind: HookKind, slot: Slot): void {
    this.armed[kind]?.(slot);
  }
}
