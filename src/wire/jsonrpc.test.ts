import { describe, expect, it } from 'vitest';
import { errorResponse, parseMessage, responseFor } from './jsonrpc.js';
import { ProtocolError } from './protocol-error.js';

describe('parseMessage', () => {
  it('classifies requests and notifications', () => {
    expect(parseMessage('{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{}}')).toMatchObject({
      ok: true,
      value: { kind: 'request', id: 7 },
    });
    expect(parseMessage('{"jsonrpc":"2.0","method":"notifications/cancelled"}')).toMatchObject({
      ok: true,
      value: { kind: 'notification' },
    });
  });
  it.each([
    ['{', -32700, null],
    ['[]', -32600, null],
    ['"x"', -32600, null],
    ['{"jsonrpc":"1.0","id":1,"method":"a"}', -32600, 1],
    ['{"jsonrpc":"2.0","id":1,"result":{}}', -32600, 1],
    ['{"jsonrpc":"2.0","id":null,"method":"a"}', -32600, null],
    ['{"jsonrpc":"2.0","id":1.5,"method":"a"}', -32600, null],
    ['{"jsonrpc":"2.0","id":"x","method":"a","params":[1]}', -32600, 'x'],
  ])('rejects %s', (body, code, id) => {
    const r = parseMessage(body);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error.code).toBe(code);
    expect(!r.ok && r.id).toBe(id);
  });
});

describe('errorResponse', () => {
  it('omits the id when it could not be read', () => {
    const e = new ProtocolError(-32700, 'Parse error');
    expect(JSON.parse(errorResponse(null, e))).toEqual({
      jsonrpc: '2.0',
      error: { code: -32700, message: 'Parse error' },
    });
    expect(JSON.parse(errorResponse('a', e)).id).toBe('a');
  });
});

describe('NUL in strings', () => {
  it('refuses a request whose params hold U+0000, in a value or a key, with its id', () => {
    for (const params of [
      '{"a":"x\\u0000y"}',
      '{"_meta":{"caps":{"k\\u0000":{}}}}',
      '{"list":["ok","\\u0000"]}',
    ]) {
      const r = parseMessage(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":${params}}`);
      expect(r.ok).toBe(false);
      expect(!r.ok && r.error.code).toBe(-32602);
      expect(!r.ok && r.id).toBe(3);
    }
  });
  it('accepts the text of a backslash followed by u0000, which is no NUL', () => {
    expect(parseMessage('{"jsonrpc":"2.0","id":3,"method":"m","params":{"a":"\\\\u0000"}}').ok).toBe(true);
  });
});

describe('responseFor', () => {
  it('answers -32603 for a result that cannot be serialized, and the result otherwise', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    for (const bad of [{ n: 1n }, cyclic]) {
      const r = responseFor(5, bad);
      expect(r.failed).toBe(true);
      expect(JSON.parse(r.text)).toMatchObject({ id: 5, error: { code: -32603 } });
    }
    expect(responseFor(5, { ok: true })).toEqual({
      text: '{"jsonrpc":"2.0","id":5,"result":{"ok":true}}',
      failed: false,
    });
  });
});
