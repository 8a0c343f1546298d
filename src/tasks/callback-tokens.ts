// Signed callback tokens (HandlerContext.callbackUrl): a URL-safe token naming a task, an event and an expiry, signed
// with a key derived from the server's secret, so that whoever holds the URL may deliver that one event and nobody can
// make one up. Every replica with the same secret accepts the tokens of the others.
import { createHmac, timingSafeEqual } from 'node:crypto';

/** The longest token accepted (those issued are far shorter): anything longer is refused unread. */
export const MAX_CALLBACK_TOKEN = 1024;
/** How long a callback URL is valid when the tool does not say (7 days). */
export const DEFAULT_CALLBACK_TTL_MS = 7 * 24 * 3_600_000;

export type CallbackCheck =
  { ok: true; taskId: string; name: string; expiresAt: number } | { ok: false; reason: 'forged' | 'expired' };

export interface CallbackTokens {
  /** A token for event `name` of task `taskId`, valid until `expiresAt` (ms). */
  issue(taskId: string, name: string, expiresAt: number): string;
  /** What a token names, or why it is refused: `forged` (not ours, malformed) or `expired` (signed, but over). */
  check(token: string, now: number): CallbackCheck;
}

const VERSION = 'c1';

export function createCallbackTokens(secret: string | Buffer): CallbackTokens {
  const key = createHmac('sha256', secret).update('durable-mcp callback v1').digest();
  const sign = (body: string): Buffer => createHmac('sha256', key).update(body).digest();
  return {
    issue(taskId, name, expiresAt) {
      const body = `${VERSION}.${Buffer.from(JSON.stringify([taskId, name, expiresAt])).toString('base64url')}`;
      return `${body}.${sign(body).toString('base64url')}`;
    },
    check(token, now) {
      const forged = { ok: false, reason: 'forged' } as const;
      if (token.length > MAX_CALLBACK_TOKEN) return forged;
      const parts = token.split('.');
      if (parts.length !== 3 || parts[0] !== VERSION) return forged;
      const body = `${parts[0]}.${parts[1] ?? ''}`;
      const sent = Buffer.from(parts[2] ?? '', 'base64url');
      const expected = sign(body);
      if (sent.length !== expected.length || !timingSafeEqual(sent, expected)) return forged;
      let fields: unknown;
      try {
        fields = JSON.parse(Buffer.from(parts[1] ?? '', 'base64url').toString('utf8'));
      } catch {
        return forged;
      }
      if (!Array.isArray(fields) || fields.length !== 3) return forged;
      const [taskId, name, expiresAt] = fields as unknown[];
      if (typeof taskId !== 'string' || typeof name !== 'string' || typeof expiresAt !== 'number')
        return forged;
      if (now >= expiresAt) return { ok: false, reason: 'expired' };
      return { ok: true, taskId, name, expiresAt };
    },
  };
}
