import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createPayloadCipher, parseKeyring } from './payload-cipher.js';

const k = (id: string) => `${id}:${randomBytes(32).toString('base64')}`;

describe('payload cipher', () => {
  it('round-trips and leaves no plaintext', () => {
    const c = createPayloadCipher(parseKeyring(k('a')));
    const sealed = c.seal('{"secret":"swordfish"}');
    expect(sealed).not.toContain('swordfish');
    expect(c.open(sealed)).toBe('{"secret":"swordfish"}');
  });
  it('rotates: new key encrypts, old keys still decrypt, unknown keys fail loudly', () => {
    const a = k('a');
    const old = createPayloadCipher(parseKeyring(a));
    const sealedOld = old.seal('x');
    const rotated = createPayloadCipher(parseKeyring(`${k('b')},${a}`));
    expect(rotated.open(sealedOld)).toBe('x');
    expect(rotated.seal('y').startsWith('enc1.b.')).toBe(true);
    expect(() => old.open(rotated.seal('y'))).toThrow(/unknown key id "b"/);
  });
  it('detects tampering and passes legacy plaintext through', () => {
    const c = createPayloadCipher(parseKeyring(k('a')));
    const sealed = c.seal('hello');
    expect(() => c.open(`${sealed.slice(0, -2)}AA`)).toThrow();
    expect(c.open('{"plain":true}')).toBe('{"plain":true}');
  });
  it('rejects malformed keyrings', () => {
    expect(() => parseKeyring('nokey')).toThrow();
    expect(() => parseKeyring(`a:${randomBytes(16).toString('base64')}`)).toThrow(/32 bytes/);
    expect(() => parseKeyring(`${k('a')},${k('a')}`)).toThrow(/unique/);
  });
});
