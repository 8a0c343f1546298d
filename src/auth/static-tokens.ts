// Static bearer tokens from a JSON file ({"tokens":[{token, tenant, principal}]}), re-read on demand (SIGHUP).
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { AuthInfo } from '../protocol/context.js';
import type { Authenticator, AuthOutcome } from './authenticator.js';
import { bearerToken, challenge } from './bearer.js';

export type TokenFileOutcome = { ok: true; value: Map<string, AuthInfo> } | { ok: false; reason: string };

const digest = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();
const isText = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && v.length <= 256;

export function parseTokenFile(text: string): TokenFileOutcome {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'not valid JSON' };
  }
  const list = (raw as { tokens?: unknown } | null)?.tokens;
  if (!Array.isArray(list))
    return { ok: false, reason: 'expected {"tokens":[{"token","tenant","principal"}]}' };
  const map = new Map<string, AuthInfo>();
  for (const [i, entry] of list.entries()) {
    const e = entry as Record<string, unknown> | null;
    if (e === null || typeof e !== 'object' || !isText(e.tenant) || !isText(e.principal)) {
      return { ok: false, reason: `tokens[${i}] needs string token, tenant and principal` };
    }
    if (typeof e.token !== 'string' || e.token.length < 16) {
      return { ok: false, reason: `tokens[${i}].token must be a string of at least 16 characters` };
    }
    const key = digest(e.token).toString('hex');
    if (map.has(key)) return { ok: false, reason: `tokens[${i}] repeats an earlier token` };
    map.set(key, { tenant: e.tenant, principal: e.principal });
  }
  return { ok: true, value: map };
}

export interface StaticTokenAuthenticator extends Authenticator {
  /** Re-reads the file; on a bad file the previous tokens stay in force and the reason is returned. */
  reload(): string | undefined;
}

export function createStaticTokenAuthenticator(path: string): StaticTokenAuthenticator {
  const load = (): Map<string, AuthInfo> => {
    const parsed = parseTokenFile(readFileSync(path, 'utf8'));
    if (!parsed.ok) throw new Error(`${path}: ${parsed.reason}`);
    return parsed.value;
  };
  let tokens = load();
  const missing: AuthOutcome = {
    ok: false,
    status: 401,
    challenge: challenge({}),
    message: 'Authentication required',
  };
  const invalid: AuthOutcome = {
    ok: false,
    status: 401,
    challenge: challenge({ error: 'invalid_token' }),
    message: 'Invalid bearer token',
  };
  return {
    mode: 'static-tokens',
    authenticate(header) {
      const token = bearerToken(header);
      if (token === undefined) return missing;
      // Compare SHA-256 digests in constant time against every entry (no early exit).
      const d = digest(token);
      let found: AuthInfo | undefined;
      for (const [key, auth] of tokens) {
        if (timingSafeEqual(d, Buffer.from(key, 'hex'))) found = auth;
      }
      return found === undefined ? invalid : { ok: true, auth: found };
    },
    reload() {
      try {
        tokens = load();
        return undefined;
      } catch (err) {
        return err instanceof Error ? err.message : String(err);
      }
    },
  };
}
