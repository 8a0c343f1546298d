import { createCipheriv, randomBytes } from 'node:crypto';
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
    expect(rotated.seal('y').startsWith('enc2.b.')).toBe(true);
    expect(() => old.open(rotated.seal('y'))).toThrow(/unknown key id "b"/);
  });
  it('detects tampering and passes legacy plaintext through', () => {
    const c = createPayloadCipher(parseKeyring(k('a')));
    const sealed = c.seal('hello');
    expect(() => c.open(`${sealed.slice(0, -2)}AA`)).toThrow();
    expect(c.open('{"plain":true}')).toBe('{"plain":true}');
  });
  it('binds a value to where it is kept: it opens there only', () => {
    const c = createPayloadCipher(parseKeyring(k('a')));
    const sealed = c.seal('{"error":"x"}', '["tasks.error","task_1"]');
    expect(c.open(sealed, '["tasks.error","task_1"]')).toBe('{"error":"x"}');
    expect(() => c.open(sealed, '["tasks.error","task_2"]')).toThrow();
    expect(() => c.open(sealed, '["tasks.result","task_1"]')).toThrow();
    expect(() => c.open(sealed)).toThrow();
  });
  it('opens values sealed by earlier releases (additional data: the key id alone), wherever they are', () => {
    const spec = k('a');
    const key = Buffer.from(spec.slice(2), 'base64');
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(Buffer.from('a'));
    const body = Buffer.concat([cipher.update('{"old":true}', 'utf8'), cipher.final()]);
    const old = `enc1.a.${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`;
    const c = createPayloadCipher(parseKeyring(spec));
    expect(c.open(old, '["tasks.args","task_1"]')).toBe('{"old":true}');
  });
  it('rejects malformed keyrings', () => {
    expect(() => parseKeyring('nokey')).toThrow();
    expect(() => parseKeyring(`a:${randomBytes(16).toString('base64')}`)).toThrow(/32 bytes/);
    expect(() => parseKeyring(`${k('a')},${k('a')}`)).toThrow(/unique/);
  });
});
