import { describe, expect, it } from 'vitest';
import { createLocalConsumeOnce, isOneTimeMethod, newNonce, nonceKey } from './one-time.js';

describe('one-time requestState', () => {
  it('makes the rounds of tools/call one-time, and leaves the reads reusable', () => {
    expect(isOneTimeMethod('tools/call')).toBe(true);
    expect(isOneTimeMethod('prompts/get')).toBe(false);
    expect(isOneTimeMethod('resources/read')).toBe(false);
  });

  it('draws a new 128-bit nonce each time', () => {
    const a = newNonce();
    expect(Buffer.from(a, 'base64url')).toHaveLength(16);
    expect(newNonce()).not.toBe(a);
    expect(nonceKey(a)).toBe(`request-state:${a}`);
  });

  it('records a key once in a process, and forgets expired keys as it sweeps', async () => {
    let now = 1_000;
    const consume = createLocalConsumeOnce(() => now);
    expect(await consume('a', 2_000)).toBe(true);
    expect(await consume('a', 2_000)).toBe(false);
    expect(await consume('b', 9_000)).toBe(true);
    now = 5_000;
    for (let i = 0; i < 256; i++) await consume(`filler-${i}`, 9_000);
    expect(await consume('a', 2_000)).toBe(true);
    expect(await consume('b', 9_000)).toBe(false);
  });
});
