import { describe, expect, it } from 'vitest';
import { checkVersionSupported, hasExtension, readEnvelope } from './envelope.js';

const meta = (extra: Record<string, unknown> = {}) => ({
  _meta: {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': {},
    ...extra,
  },
});

describe('readEnvelope', () => {
  it('reads the required keys and leaves clientInfo optional', () => {
    const r = readEnvelope(meta());
    expect(r.ok && r.value.protocolVersion).toBe('2026-07-28');
    expect(r.ok && r.value.clientInfo).toBeUndefined();
  });
  it.each([
    ['no params', undefined],
    ['no _meta', {}],
    ['no protocolVersion', { _meta: { 'io.modelcontextprotocol/clientCapabilities': {} } }],
    ['no clientCapabilities', { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } }],
    ['capabilities not an object', meta({ 'io.modelcontextprotocol/clientCapabilities': [] })],
    ['bad clientInfo', meta({ 'io.modelcontextprotocol/clientInfo': { name: 1 } })],
    ['bad logLevel', meta({ 'io.modelcontextprotocol/logLevel': 'verbose' })],
    ['bad progressToken', meta({ progressToken: {} })],
  ])('rejects %s with -32602', (_label, params) => {
    const r = readEnvelope(params as Record<string, unknown> | undefined);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error.code).toBe(-32602);
  });
});

describe('checkVersionSupported', () => {
  it('answers -32022 with supported and requested', () => {
    const e = checkVersionSupported('1900-01-01', ['2026-07-28']);
    expect(e?.code).toBe(-32022);
    expect(e?.data).toEqual({ supported: ['2026-07-28'], requested: '1900-01-01' });
    expect(checkVersionSupported('2026-07-28', ['2026-07-28'])).toBeUndefined();
  });
});

describe('hasExtension', () => {
  it('needs an object value under extensions[id]', () => {
    expect(
      hasExtension({ extensions: { 'io.modelcontextprotocol/tasks': {} } }, 'io.modelcontextprotocol/tasks'),
    ).toBe(true);
    expect(
      hasExtension(
        { extensions: { 'io.modelcontextprotocol/tasks': true } } as never,
        'io.modelcontextprotocol/tasks',
      ),
    ).toBe(false);
    expect(hasExtension({}, 'io.modelcontextprotocol/tasks')).toBe(false);
  });
});
