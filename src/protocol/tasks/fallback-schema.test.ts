// The fallback's widened outputSchemas: what a tool listed to clients without the tasks extension admits.
import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../../wire/jsonrpc.js';
import { compileSchema } from '../schema-validation.js';
import { withHandle } from './fallback.js';
import { described, elicitForm, ID, snapshot } from '../../../test/support/hand-back.js';

describe('withHandle', () => {
  const handBack = described(snapshot({ status: 'working' })).structuredContent;
  const asked = described(
    snapshot({
      status: 'input_required',
      inputRequests: { q: elicitForm({ type: 'object', properties: { ok: { type: 'boolean' } } }) },
    }),
  ).structuredContent;

  it('admits the original values and a hand-back, and nothing else', () => {
    const schema: JsonObject = {
      type: 'object',
      properties: { total: { type: 'number' }, items: { type: 'array', items: { type: 'string' } } },
      required: ['total'],
      additionalProperties: false,
    };
    const original = compileSchema(schema, 'structuredContent');
    const widened = compileSchema(withHandle(schema), 'structuredContent');
    const value = { total: 3, items: ['a', 'b'] };
    expect(original(value).ok).toBe(true);
    expect(widened(value).ok).toBe(true);
    for (const back of [handBack, asked]) {
      expect(original(back).ok).toBe(false);
      expect(widened(back).ok).toBe(true);
    }
    for (const bad of [
      { total: 'three' },
      { total: 1, extra: true },
      { taskId: ID },
      { taskId: ID, status: 'done', instructions: 'x' },
      { taskId: ID, status: 'working' },
      'text',
      null,
    ]) {
      expect(widened(bad).ok).toBe(false);
    }
  });
  it('keeps $schema and $defs at the root, so references still resolve', () => {
    const schema: JsonObject = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      $defs: {
        Item: {
          type: 'object',
          properties: { sku: { type: 'string' } },
          required: ['sku'],
          additionalProperties: false,
        },
      },
      type: 'object',
      properties: { items: { type: 'array', items: { $ref: '#/$defs/Item' } } },
      required: ['items'],
    };
    const widenedSchema = withHandle(schema);
    expect(widenedSchema.$schema).toBe(schema.$schema);
    expect(widenedSchema.$defs).toEqual(schema.$defs);
    expect((widenedSchema.anyOf as JsonObject[])[0]).not.toHaveProperty('$defs');
    expect((widenedSchema.anyOf as JsonObject[])[0]).not.toHaveProperty('$schema');

    const original = compileSchema(schema, 'structuredContent');
    const widened = compileSchema(widenedSchema, 'structuredContent');
    const value = { items: [{ sku: 'a-1' }] };
    expect(original(value)).toEqual({ ok: true });
    expect(widened(value)).toEqual({ ok: true });
    expect(original(handBack).ok).toBe(false);
    expect(widened(handBack)).toEqual({ ok: true });
    // The referenced definition is enforced, not skipped as unresolvable.
    expect(widened({ items: [{ sku: 1 }] }).ok).toBe(false);
    expect(widened({ items: [{ sku: 'a', colour: 'red' }] }).ok).toBe(false);
  });
  it('rebases references into the schema itself, so they mean what they meant', () => {
    const pointer: JsonObject = {
      type: 'object',
      properties: { a: { type: 'string' }, b: { $ref: '#/properties/a' } },
    };
    const widenedPointer = compileSchema(withHandle(pointer));
    expect(widenedPointer({ a: 'x', b: 'y' }).ok).toBe(true);
    expect(widenedPointer({ a: 'x', b: 3 }).ok).toBe(false);
    const tree: JsonObject = {
      type: 'object',
      properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#' } } },
      required: ['name'],
      additionalProperties: false,
    };
    const widenedTree = compileSchema(withHandle(tree));
    expect(widenedTree({ name: 'r', children: [{ name: 'c', children: [] }] }).ok).toBe(true);
    // A child is a node of the original shape, never a hand-back.
    expect(
      widenedTree({ name: 'r', children: [{ taskId: 't', status: 'working', instructions: 'x' }] }).ok,
    ).toBe(false);
    expect(widenedTree(handBack).ok).toBe(true);
  });

  it('keeps draft-07 definitions resolvable too', () => {
    const schema: JsonObject = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      definitions: { Count: { type: 'integer', minimum: 0 } },
      type: 'object',
      properties: { count: { $ref: '#/definitions/Count' } },
      required: ['count'],
    };
    const widened = compileSchema(withHandle(schema), 'structuredContent');
    expect(widened({ count: 2 })).toEqual({ ok: true });
    expect(widened({ count: -1 }).ok).toBe(false);
    expect(widened(handBack)).toEqual({ ok: true });
  });
  it('leaves the schema it widens untouched', () => {
    const schema: JsonObject = {
      $defs: { N: { type: 'number' } },
      type: 'object',
      properties: { n: { $ref: '#/$defs/N' } },
    };
    const copy = structuredClone(schema);
    withHandle(schema);
    expect(schema).toEqual(copy);
  });
});
