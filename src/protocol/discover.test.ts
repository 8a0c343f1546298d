// The server/discover result: built once per registry version, and built anew when a list changes.
import { describe, expect, it } from 'vitest';
import { resultResponse } from '../wire/jsonrpc.js';
import { definePrompt, defineTool } from './define.js';
import { discoverResult } from './discover.js';
import { Registry } from './registry.js';

const tool = defineTool({ name: 'plain', handler: () => ({ content: [] }) });
const prompt = definePrompt({ name: 'greet', handler: () => ({ messages: [] }) });

function source(registry: Registry) {
  return {
    registry,
    extensions: [{ id: 'x.example/ext', capability: { a: 1 } }],
    providers: [],
    instructions: 'be kind',
    ttlMs: 1_000,
    serverMeta: { 'io.modelcontextprotocol/serverInfo': { name: 's', version: '1' } },
  };
}

describe('discoverResult', () => {
  it('answers every request with the same result while the registry does not change', () => {
    const discover = discoverResult(source(new Registry([{ tools: [tool] }])));
    const first = discover();
    expect(discover()).toBe(first);
    expect(first).toMatchObject({
      resultType: 'complete',
      capabilities: { tools: { listChanged: true }, extensions: { 'x.example/ext': { a: 1 } } },
      ttlMs: 1_000,
      cacheScope: 'public',
      instructions: 'be kind',
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: 's', version: '1' } },
    });
    expect(first.capabilities).not.toHaveProperty('prompts');
  });

  it('advertises prompts once one is added, in the result and in its serialised answer', () => {
    const registry = new Registry([{ tools: [tool] }]);
    const discover = discoverResult(source(registry));
    const before = discover();
    expect(resultResponse(1, before)).not.toContain('"prompts"');
    registry.control().addPrompt(prompt);
    const after = discover();
    expect(after).not.toBe(before);
    expect(after.capabilities).toMatchObject({ prompts: { listChanged: true } });
    expect(resultResponse(2, after)).toContain('"prompts":{"listChanged":true}');
    registry.control().removePrompt('greet');
    expect(discover().capabilities).not.toHaveProperty('prompts');
  });
});
