// What a new idempotency key of a tools/call (`_meta["dev.durable-mcp/idempotencyKey"]`) may be: checked by the
// server when a call brings one and by the client before it sends one. Keys are shown to people (operators' views,
// the CLI), so no control character may be part of one.

export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

// eslint-disable-next-line no-control-regex -- the characters a key may not hold
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** The key if it may be used, else why not (to follow "the idempotency key"). */
export function checkIdempotencyKey(
  key: unknown,
): { ok: true; value: string } | { ok: false; reason: string } {
  if (typeof key !== 'string' || key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH)
    return { ok: false, reason: `must be a string of 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters` };
  const control = CONTROL.exec(key);
  if (control !== null) {
    const code = control[0].charCodeAt(0).toString(16).padStart(4, '0');
    return {
      ok: false,
      reason: `must not contain control characters (U+${code.toUpperCase()} at ${control.index})`,
    };
  }
  return { ok: true, value: key };
}
