import { Readable } from 'node:stream';
import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { readRetryBody } from './retry-body.js';

const request = (...chunks: string[]): IncomingMessage =>
  Readable.from(chunks.map((c) => Buffer.from(c))) as IncomingMessage;

describe('readRetryBody', () => {
  it('reads no body, an empty object, or a recorded step', async () => {
    expect(await readRetryBody(request())).toEqual({ ok: true, record: undefined });
    expect(await readRetryBody(request('{}'))).toEqual({ ok: true, record: undefined });
    const body = JSON.stringify({ record: { step: 'upstream', value: { content: [] } } });
    expect(await readRetryBody(request(body.slice(0, 10), body.slice(10)))).toEqual({
      ok: true,
      record: { step: 'upstream', value: { content: [] } },
    });
    expect(await readRetryBody(request('{"record":{"step":"s","value":null}}'))).toEqual({
      ok: true,
      record: { step: 's', value: null },
    });
  });

  it('refuses what is not one, saying what is expected', async () => {
    const refused = async (text: string) => {
      const body = await readRetryBody(request(text));
      if (body.ok) throw new Error(`accepted ${text}`);
      expect(body.status).toBe('bad_request');
      return body.message;
    };
    expect(await refused('not json')).toMatch(/not JSON/);
    expect(await refused('[1]')).toMatch(/JSON object/);
    expect(await refused('{"recrd":{}}')).toMatch(/Unknown field "recrd"/);
    expect(await refused('{"record":{"step":"s"}}')).toMatch(/record.value/);
    expect(await refused('{"record":{"step":"","value":1}}')).toMatch(/record.step/);
    expect(await refused('{"record":{"step":"a\\u001b[2J","value":1}}')).toMatch(/control characters/);
    expect(await refused(JSON.stringify({ record: { step: 'x'.repeat(201), value: 1 } }))).toMatch(
      /record.step/,
    );
    expect(await refused('{"record":{"step":"s","value":1,"extra":2}}')).toMatch(/record is/);
  });

  it('refuses a body over the bound without keeping it', async () => {
    const body = await readRetryBody(
      request('{"record":', '{"step":"s","value":"', 'x'.repeat(100), '"}}'),
      64,
    );
    expect(body).toEqual({ ok: false, status: 'too_large', message: 'The body is larger than 64 bytes' });
  });
});
