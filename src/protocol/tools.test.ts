// What a handler must return: a result with a content array; anything else is named in the error.
import { describe, expect, it } from 'vitest';
import { ProtocolError } from '../wire/protocol-error.js';
import { defineTool } from './define.js';
import { Registry } from './registry.js';
import { toolResult } from './tools.js';

const registry = new Registry([
  { tools: [defineTool({ name: 'plain', description: 'd', handler: () => ({ content: [] }) })] },
]);
const tool = registry.tools.get('plain')!;

describe('toolResult', () => {
  it('marks a result with a content array complete', () => {
    expect(toolResult(tool, { content: [{ type: 'text', text: 'hi' }] })).toEqual({
      resultType: 'complete',
      content: [{ type: 'text', text: 'hi' }],
    });
  });

  it.each([
    [undefined, 'undefined'],
    [null, 'null'],
    ['hello', 'a string'],
    [42, 'a number'],
    [[], 'an array'],
    [{ text: 'hi' }, 'an object without a content array'],
  ])('names what the handler returned instead: %j', (value, named) => {
    let thrown: unknown;
    try {
      toolResult(tool, value as never);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ProtocolError);
    expect((thrown as ProtocolError).code).toBe(-32603);
    expect((thrown as ProtocolError).message).toBe(
      `Tool plain returned ${named} instead of a result: a handler returns { content: [...] }, e.g. textResult('…')`,
    );
  });
});
