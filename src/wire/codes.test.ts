import { describe, expect, it } from 'vitest';
import { ErrorCode, httpStatusFor } from './codes.js';

// Pins the HTTP status table against the 2026-07-28 Streamable HTTP rules.
describe('httpStatusFor', () => {
  it('follows the statuses the spec pins', () => {
    expect(httpStatusFor(ErrorCode.MethodNotFound, 'envelope')).toBe(404);
    expect(httpStatusFor(ErrorCode.MethodNotFound, 'handler')).toBe(404);
    expect(httpStatusFor(ErrorCode.InvalidParams, 'envelope')).toBe(400);
    for (const origin of ['envelope', 'handler'] as const) {
      expect(httpStatusFor(ErrorCode.HeaderMismatch, origin)).toBe(400);
      expect(httpStatusFor(ErrorCode.MissingRequiredClientCapability, origin)).toBe(400);
      expect(httpStatusFor(ErrorCode.UnsupportedProtocolVersion, origin)).toBe(400);
    }
  });
  it('answers handler errors in the JSON-RPC body with 200, internal faults with 500', () => {
    expect(httpStatusFor(ErrorCode.InvalidParams, 'handler')).toBe(200);
    expect(httpStatusFor(ErrorCode.InternalError, 'handler')).toBe(500);
    expect(httpStatusFor(ErrorCode.ParseError, 'envelope')).toBe(400);
  });
});
