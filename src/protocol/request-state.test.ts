import { describe, expect, it } from 'vitest';
import { createStateSealer, requestBinding } from './request-state.js';

describe('request state sealing', () => {
  const sealer = createStateSealer('secret-a');
  const binding = requestBinding('t\u0000alice', 'tools/call', 'tool', { b: 1, a: [1, 2] });

  it('opens what it sealed, for the same binding, before expiry', () => {
    const token = sealer.seal({ answers: { x: 1 } }, binding, 2_000);
    expect(sealer.unseal(token, binding, 1_000)).toEqual({ ok: true, value: { answers: { x: 1 } } });
  });
  it('binds to principal, method, target and arguments (key order does not matter)', () => {
    const token = sealer.seal(1, binding, 2_000);
    expect(
      sealer.unseal(token, requestBinding('t\u0000alice', 'tools/call', 'tool', { a: [1, 2], b: 1 }), 0).ok,
    ).toBe(true);
    expect(
      sealer.unseal(token, requestBinding('t\u0000bob', 'tools/call', 'tool', { b: 1, a: [1, 2] }), 0).ok,
    ).toBe(false);
    expect(
      sealer.unseal(token, requestBinding('t\u0000alice', 'tools/call', 'other', { b: 1, a: [1, 2] }), 0).ok,
    ).toBe(false);
    expect(
      sealer.unseal(token, requestBinding('t\u0000alice', 'tools/call', 'tool', { b: 2, a: [1, 2] }), 0).ok,
    ).toBe(false);
  });
  it('rejects tampering, truncation, expiry and another secret', () => {
    const token = sealer.seal({ v: 1 }, binding, 2_000);
    expect(sealer.unseal(`${token}-TAMPERED`, binding, 0).ok).toBe(false);
    const flipped = `${token.slice(0, 30)}${token[30] === 'A' ? 'B' : 'A'}${token.slice(31)}`;
    expect(sealer.unseal(flipped, binding, 0).ok).toBe(false);
    expect(sealer.unseal(token.slice(0, 10), binding, 0).ok).toBe(false);
    expect(sealer.unseal(token, binding, 3_000)).toEqual({ ok: false, reason: 'expired' });
    expect(createStateSealer('secret-b').unseal(token, binding, 0).ok).toBe(false);
  });
  it('never produces the same token twice', () => {
    expect(sealer.seal(1, binding, 10)).not.toBe(sealer.seal(1, binding, 10));
  });
});
