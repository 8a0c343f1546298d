// serve's store start-up: back-off between attempts, one warning per cause (and a reminder), a refused set-up ends
// the retries, stop() ends them and closes what an attempt under way opens.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Logger } from '../../observability/logger.js';
import type { Backend } from '../../tasks/backend.js';
import { StoreUnavailableError } from '../../tasks/errors.js';
import { retryDelay, retryOpening, STORE_RETRY, type RetryPolicy } from './serve-store.js';

const refused = new StoreUnavailableError('connection refused (127.0.0.1:1)', true);
const lookup = new StoreUnavailableError('host not found', true);

function recordingLogger() {
  const lines: { level: string; fields: Record<string, unknown>; msg: string }[] = [];
  const at =
    (level: string) =>
    (fields: Record<string, unknown>, msg: string): void => {
      lines.push({ level, fields, msg });
    };
  return { logger: { warn: at('warn'), info: at('info') } as unknown as Logger, lines };
}

const backend = (): Backend & { closed: boolean } => {
  const b = { closed: false, close: async () => void (b.closed = true) };
  return b as unknown as Backend & { closed: boolean };
};

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

const policy: RetryPolicy = { ...STORE_RETRY, random: () => 0, now: () => Date.now() };

describe('retryDelay', () => {
  it('doubles from 500 ms to a 15 s cap, up to a quarter less at random', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 60].map((n) => retryDelay(n, policy))).toEqual([
      500, 1_000, 2_000, 4_000, 8_000, 15_000, 15_000, 15_000,
    ]);
    expect(retryDelay(1, { ...policy, random: () => 0.999 })).toBe(375);
  });
});

describe('retryOpening', () => {
  it('tries again with back-off until the store opens, warning once per cause and reminding every 30 s', async () => {
    const { logger, lines } = recordingLogger();
    const opened = backend();
    const failures = [refused, refused, refused, refused, refused, refused, refused, lookup];
    let attempts = 0;
    const open = async (): Promise<Backend> => {
      attempts += 1;
      const failure = failures.shift();
      if (failure !== undefined) throw failure;
      return opened;
    };
    const opening = retryOpening(open, refused, logger, policy);
    // Waits 0.5, 1, 2, 4, 8, 15, 15, 15, 15 s, then the ninth retry (the tenth attempt) opens.
    await vi.advanceTimersByTimeAsync(500 + 1_000 + 2_000 + 4_000 + 8_000 + 4 * 15_000);
    expect(await opening.opened).toBe(opened);
    expect(attempts).toBe(9);
    const warnings = lines.filter((l) => l.level === 'warn');
    expect(warnings.map((l) => [l.msg, l.fields.reason])).toEqual([
      ['not ready: the store does not answer; retrying', refused.reason],
      ['still not ready: the store does not answer; retrying', refused.reason],
      ['not ready: the store does not answer; retrying', lookup.reason],
    ]);
    expect(lines.at(-1)).toMatchObject({
      level: 'info',
      msg: 'ready: the store answers',
      fields: { attempts: 10 },
    });
  });

  it('stops at a refusal (not an unreachable store), which the caller reports', async () => {
    const { logger } = recordingLogger();
    const denied = new StoreUnavailableError('authentication failed (SQLSTATE 28P01)');
    const opening = retryOpening(() => Promise.reject(denied), refused, logger, policy);
    const settled = opening.opened.catch((err: unknown) => err);
    await vi.advanceTimersByTimeAsync(500);
    expect(await settled).toBe(denied);
  });

  it('stops when told, closing what an attempt under way opens', async () => {
    const { logger } = recordingLogger();
    const late = backend();
    let finish: ((b: Backend) => void) | undefined;
    const opening = retryOpening(
      () => new Promise<Backend>((resolve) => (finish = resolve)),
      refused,
      logger,
      policy,
    );
    await vi.advanceTimersByTimeAsync(500);
    expect(finish).toBeDefined();
    const stopping = opening.stop(5_000);
    finish?.(late);
    await stopping;
    expect(await opening.opened).toBeUndefined();
    expect(late.closed).toBe(true);

    const idle = retryOpening(() => Promise.reject(refused), refused, logger, policy);
    await idle.stop();
    expect(await idle.opened).toBeUndefined();
  });
});
