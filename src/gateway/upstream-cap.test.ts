// The gateway's cap on an upstream's calls at once: every task of its tools under one concurrency key.
import { describe, expect, it } from 'vitest';
import { createGateway } from '../gateway.js';
import { catalogTools, upstreamConcurrencyKey } from './catalog.js';
import type { Upstream, UpstreamTool } from './upstream.js';

const upstream: Upstream = {
  name: 'fake',
  ready: async () => undefined,
  listTools: async () => [],
  callTool: async () => ({ content: [] }),
  onToolsChanged: () => undefined,
  close: async () => undefined,
};
const tool = (name: string): UpstreamTool => ({ name, inputSchema: { type: 'object' } });

describe('the upstream cap', () => {
  it("puts every task tool under the upstream's key, and leaves synchronous tools out", () => {
    const concurrency = { limit: 3, key: 'upstream:api.example.com#00000000' };
    const defs = catalogTools(upstream, [tool('a'), tool('b'), tool('c')], {
      taskTools: ['b'],
      syncTools: ['c'],
      concurrency,
    });
    expect(defs.map((d) => [d.name, d.task?.concurrency])).toEqual([
      ['a', { limit: 3, key: 'upstream:api.example.com#00000000' }],
      ['b', { limit: 3, key: 'upstream:api.example.com#00000000' }],
      ['c', undefined],
    ]);
  });

  it('names the key by a printable, bounded label and a digest of where the upstream is', () => {
    const one = upstreamConcurrencyKey('node', 'stdio:node ./crm-server.js');
    expect(one).toMatch(/^upstream:node#[0-9a-f]{8}$/);
    // The same upstream gives the same key (every replica); another one run by the same command, another key.
    expect(upstreamConcurrencyKey('node', 'stdio:node ./crm-server.js')).toBe(one);
    expect(upstreamConcurrencyKey('node', 'stdio:node ./billing-server.js')).not.toBe(one);
    expect(upstreamConcurrencyKey('a\nb\u202e')).toMatch(/^upstream:a\?b\?#/);
    expect(upstreamConcurrencyKey('x'.repeat(500)).length).toBeLessThanOrEqual(200);
  });

  it('refuses a cap that is not a count', async () => {
    await expect(createGateway({ upstream, upstreamConcurrency: 0 })).rejects.toThrow(
      'upstreamConcurrency: limit must be a whole number from 1 to 1000000',
    );
  });
});
