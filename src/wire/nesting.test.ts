// The depth limit on incoming JSON: brackets nested deeper than the limit are refused, brackets inside strings and
// many shallow brackets are not, whichever way the scan decides.
import { describe, expect, it } from 'vitest';
import { MAX_DEPTH, nestingExceeds, parseMessage } from './jsonrpc.js';

const nested = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth);

describe('nestingExceeds', () => {
  it('tells a depth over the limit from one at it', () => {
    expect(nestingExceeds(nested(MAX_DEPTH), MAX_DEPTH)).toBe(false);
    expect(nestingExceeds(nested(MAX_DEPTH + 1), MAX_DEPTH)).toBe(true);
    expect(nestingExceeds(`{"a":${nested(MAX_DEPTH)}}`, MAX_DEPTH)).toBe(true);
  });
  it('does not count brackets inside strings, however many', () => {
    const text = JSON.stringify({ s: '{['.repeat(500), t: '\\"[[[[' });
    expect(nestingExceeds(text, MAX_DEPTH)).toBe(false);
    expect(nestingExceeds(`[${JSON.stringify('"]]]]')}${nested(MAX_DEPTH)}]`, MAX_DEPTH)).toBe(true);
  });
  it('does not refuse many brackets side by side', () => {
    const wide = JSON.stringify({ items: Array.from({ length: 300 }, (_, i) => ({ i, tags: [i] })) });
    expect(nestingExceeds(wide, MAX_DEPTH)).toBe(false);
  });
  it('refuses a deep request before parsing it, with -32600', () => {
    const body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":${nested(MAX_DEPTH)}}}`;
    expect(parseMessage(body)).toMatchObject({ ok: false, id: null, error: { code: -32600 } });
  });
});
