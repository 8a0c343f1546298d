import { describe, expect, it } from 'vitest';
import { errorResponse, parseMessage } from './jsonrpc.js';
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
