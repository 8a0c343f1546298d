import { describe, expect, it } from 'vitest';
import { checkRoutingHeaders, checkVersionHeader, decodeHeaderValue, encodeHeaderValue } from './headers.js';

const lookup = (h: Record<string, string>) => (name: string) => h[name];

describe('decodeHeaderValue', () => {
  it('passes plain visible ASCII through, trimmed', () => {
    expect(decodeHeaderValue('  get_weather ')).toEqual({ ok: true, value: 'get_weather' });
  });
  it('decodes the base64 sentinel', () => {
    expect(decodeHeaderValue('=?base64?SGVsbG8=?=')).toEqual({ ok: true, value: 'Hello' });
    expect(decodeHeaderValue(`=?base64?${Buffer.from('héllo wörld', 'utf8').toString('base64')}?=`)).toEqual({
      ok: true,
      value: 'héllo wörld',
    });
  });
  it('rejects invalid base64 inside the sentinel', () => {
    expect(decodeHeaderValue('=?base64?SGVsbG8?=').ok).toBe(false);
    expect(decodeHeaderValue('=?base64?SGVs!!!bG8=?=').ok).toBe(false);
  });
  it('treats markers in another case, or without the suffix, as literals', () => {
    expect(decodeHeaderValue('=?BASE64?SGVsbG8=?=')).toEqual({ ok: true, value: '=?BASE64?SGVsbG8=?=' });
    expect(decodeHeaderValue('=?base64?SGVsbG8=')).toEqual({ ok: true, value: '=?base64?SGVsbG8=' });
  });
  it('rejects control and non-ASCII characters', () => {
    expect(decodeHeaderValue('a\u0001b').ok).toBe(false);
    expect(decodeHeaderValue('naïve').ok).toBe(false);
  });
  it('round-trips through encodeHeaderValue', () => {
    for (const v of ['plain', ' padded ', 'ünï', '=?base64?abc?=', 'tab\there', '']) {
      expect(decodeHeaderValue(encodeHeaderValue(v))).toEqual({ ok: true, value: v });
    }
  });
});

describe('checkRoutingHeaders', () => {
  it('requires Mcp-Method equal to the body method (case-sensitive)', () => {
    expect(checkRoutingHeaders(lookup({}), 'tools/list', {})?.code).toBe(-32020);
    expect(checkRoutingHeaders(lookup({ 'mcp-method': 'TOOLS/LIST' }), 'tools/list', {})?.code).toBe(-32020);
    expect(checkRoutingHeaders(lookup({ 'mcp-method': ' tools/list ' }), 'tools/list', {})).toBeUndefined();
  });
  it('requires Mcp-Name for named methods, after decoding', () => {
    const h = { 'mcp-method': 'tasks/get' };
    expect(checkRoutingHeaders(lookup(h), 'tasks/get', { taskId: 't1' })?.message).toMatch(
      /missing Mcp-Name/,
    );
    expect(checkRoutingHeaders(lookup({ ...h, 'mcp-name': 't2' }), 'tasks/get', { taskId: 't1' })?.code).toBe(
      -32020,
    );
    expect(
      checkRoutingHeaders(lookup({ ...h, 'mcp-name': 't1' }), 'tasks/get', { taskId: 't1' }),
    ).toBeUndefined();
    const uri = 'file:///ü.txt';
    const r = { 'mcp-method': 'resources/read', 'mcp-name': encodeHeaderValue(uri) };
    expect(checkRoutingHeaders(lookup(r), 'resources/read', { uri })).toBeUndefined();
  });
  it('leaves a body without a string name to the method validation', () => {
    expect(checkRoutingHeaders(lookup({ 'mcp-method': 'tools/call' }), 'tools/call', {})).toBeUndefined();
  });
});

describe('checkVersionHeader', () => {
  it('requires MCP-Protocol-Version equal to _meta', () => {
    expect(checkVersionHeader(lookup({}), '2026-07-28')?.code).toBe(-32020);
    expect(checkVersionHeader(lookup({ 'mcp-protocol-version': '2025-11-25' }), '2026-07-28')?.code).toBe(
      -32020,
    );
    expect(
      checkVersionHeader(lookup({ 'mcp-protocol-version': '2026-07-28' }), '2026-07-28'),
    ).toBeUndefined();
  });
});
