import { describe, expect, it } from 'vitest';
import { checkParamHeaders, collectParamHeaders } from './param-headers.js';

const schema = {
  type: 'object',
  properties: {
    region: { type: 'string', 'x-mcp-header': 'Region' },
    count: { type: 'integer', 'x-mcp-header': 'Count' },
    nested: { type: 'object', properties: { flag: { type: 'boolean', 'x-mcp-header': 'Flag' } } },
  },
};
const lookup = (h: Record<string, string>) => (name: string) => h[name];

describe('collectParamHeaders', () => {
  it('finds declarations through chains of properties', () => {
    expect(collectParamHeaders(schema).map((p) => [p.name, p.path.join('.')])).toEqual([
      ['Region', 'region'],
      ['Count', 'count'],
      ['Flag', 'nested.flag'],
    ]);
  });
  it('rejects invalid declarations', () => {
    expect(() => collectParamHeaders({ properties: { a: { type: 'number', 'x-mcp-header': 'A' } } })).toThrow(
      /only allowed/,
    );
    expect(() =>
      collectParamHeaders({ properties: { a: { type: 'string', 'x-mcp-header': 'bad name' } } }),
    ).toThrow(/token/);
    expect(() =>
      collectParamHeaders({
        properties: {
          a: { type: 'string', 'x-mcp-header': 'X' },
          b: { type: 'string', 'x-mcp-header': 'x' },
        },
      }),
    ).toThrow(/twice/);
  });
});

describe('checkParamHeaders', () => {
  const declared = collectParamHeaders(schema);
  it('accepts matching values, decoded and compared by type', () => {
    const h = {
      'mcp-param-region': '=?base64?ZXUtd2VzdA==?=',
      'mcp-param-count': '42',
      'mcp-param-flag': 'true',
    };
    expect(
      checkParamHeaders(lookup(h), declared, { region: 'eu-west', count: 42, nested: { flag: true } }),
    ).toBeUndefined();
  });
  it('compares integers exactly: none beyond 2^53 matches, whatever rounding would say', () => {
    const big = 2 ** 53 + 2; // 9007199254740994: the header below rounds to it as a number
    expect(
      checkParamHeaders(lookup({ 'mcp-param-count': '9007199254740993' }), declared, { count: big })?.code,
    ).toBe(-32020);
    expect(
      checkParamHeaders(lookup({ 'mcp-param-count': String(big) }), declared, { count: big })?.code,
    ).toBe(-32020);
    const safe = Number.MAX_SAFE_INTEGER;
    expect(
      checkParamHeaders(lookup({ 'mcp-param-count': String(safe) }), declared, { count: safe }),
    ).toBeUndefined();
    expect(checkParamHeaders(lookup({ 'mcp-param-count': '-007' }), declared, { count: -7 })).toBeUndefined();
  });
  it('rejects a missing header when the argument has a value', () => {
    expect(checkParamHeaders(lookup({}), declared, { region: 'x' })?.code).toBe(-32020);
  });
  it('rejects mismatches and a header without an argument', () => {
    expect(checkParamHeaders(lookup({ 'mcp-param-region': 'y' }), declared, { region: 'x' })?.code).toBe(
      -32020,
    );
    expect(checkParamHeaders(lookup({ 'mcp-param-count': '4.0' }), declared, { count: 4 })?.code).toBe(
      -32020,
    );
    expect(checkParamHeaders(lookup({ 'mcp-param-region': 'x' }), declared, {})?.code).toBe(-32020);
  });
  it('skips null arguments', () => {
    expect(checkParamHeaders(lookup({}), declared, { region: null })).toBeUndefined();
  });
});
