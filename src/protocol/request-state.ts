// Sealed MRTR `requestState`: AES-256-GCM, bound to principal + method + target + arguments, expiring.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

export interface StateSealer {
  seal(payload: unknown, binding: string, expiresAtMs: number): string;
  unseal(
    token: string,
    binding: string,
    nowMs: number,
  ): { ok: true; value: unknown } | { ok: false; reason: string };
}

const IV_BYTES = 12;
const TAG_BYTES = 16;

export function createStateSealer(secret: string | Buffer): StateSealer {
  const key = createHash('sha256').update('durable-mcp/request-state/v1').update(secret).digest();
  return {
    seal(payload, binding, expiresAtMs) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(Buffer.from(binding, 'utf8'));
      const body = Buffer.concat([
        cipher.update(JSON.stringify({ e: expiresAtMs, p: payload }), 'utf8'),
        cipher.final(),
      ]);
      return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
    },
    unseal(token, binding, nowMs) {
      const raw = Buffer.from(token, 'base64url');
      if (raw.length <= IV_BYTES + TAG_BYTES || raw.toString('base64url') !== token) {
        return { ok: false, reason: 'malformed' };
      }
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES));
        decipher.setAAD(Buffer.from(binding, 'utf8'));
        decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
        const plain = Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
        const parsed = JSON.parse(plain.toString('utf8')) as { e: number; p: unknown };
        if (typeof parsed.e !== 'number' || parsed.e < nowMs) return { ok: false, reason: 'expired' };
        return { ok: true, value: parsed.p };
      } catch {
        return { ok: false, reason: 'tampered or issued for another request' };
      }
    },
  };
}

/** A stable binding string for a request: who asked, which method, which target, which arguments. */
export function requestBinding(principalKey: string, method: string, target: string, args: unknown): string {
  const digest = createHash('sha256')
    .update(stableStringify(args ?? null))
    .digest('base64url');
  return `${principalKey}\n${method}\n${target}\n${digest}`;
}

function stableStringify(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableStringify(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
