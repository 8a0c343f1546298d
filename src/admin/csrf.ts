// The operator API's CSRF token: an HMAC of the caller's tenant and principal under a key derived from the backend's
// stored secret, so every replica issues and accepts the same token, and no token outlives a change of that secret.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { TaskOwner } from '../tasks/task.js';

export interface CsrfTokens {
  /** The token of a caller (base64url). */
  issue(who: TaskOwner): string;
  /** Whether `sent` is the caller's token, compared in constant time. */
  check(who: TaskOwner, sent: string | undefined): boolean;
}

/** A key of its own for CSRF tokens, derived from the server's secret (which also seals MRTR `requestState`). */
const csrfKey = (secret: string | Buffer): Buffer =>
  createHmac('sha256', secret).update('durable-mcp admin csrf v1').digest();

export function createCsrfTokens(secret: string | Buffer): CsrfTokens {
  const key = csrfKey(secret);
  const issue = (who: TaskOwner): string =>
    createHmac('sha256', key)
      .update(JSON.stringify([who.tenant, who.principal]))
      .digest('base64url');
  // Both sides are hashed first, so the comparison takes the same time whatever the length sent.
  const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();
  return {
    issue,
    check: (who, sent) => sent !== undefined && timingSafeEqual(digest(issue(who)), digest(sent)),
  };
}
