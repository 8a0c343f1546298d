// The stateless rows' checks: tools/list expects the demo tool set's tools, whatever the demo holds; server/discover its version.
import { describe, expect, it } from 'vitest';
import { defineTool, textResult, type ToolSet } from 'durable-mcp';
import demo from '../../examples/demo/index.js';
import { listedTools, toolListProblem } from '../harness/demo-tools.js';
import { verifyDiscover, verifyToolList } from './stateless.js';

/** A tools/list answer as a server lists `tools`. */
const answer = (tools: unknown[]) => JSON.stringify({ jsonrpc: '2.0', id: 1, result: { tools } });

/** What a server lists for each demo tool: its name and input schema (an empty object's when it has none). */
const demoListing = (set: ToolSet = demo) =>
  (set.tools ?? []).map((t) => ({
    name: t.name,
    title: t.title,
    inputSchema: t.inputSchema ?? { type: 'object' },
  }));

const extra = defineTool({ name: 'brand_new', handler: () => textResult('new') });

describe('bench tools/list check', () => {
  it("accepts a server that lists exactly the demo tool set's tools", async () => {
    expect(demo.tools!.length).toBeGreaterThan(0);
    expect(await verifyToolList(200, answer(demoListing()))).toBeUndefined();
  });

  it('rejects a listing without one of the demo tools, with a tool more, or with another input schema', async () => {
    const listing = demoListing();
    expect(await verifyToolList(200, answer(listing.slice(1)))).toMatch(/expected the tools/);
    expect(await verifyToolList(200, answer([...listing, { name: 'other', inputSchema: {} }]))).toMatch(
      /expected the tools/,
    );
    const changed = listing.map((t, i) => (i === 0 ? { ...t, inputSchema: { type: 'string' } } : t));
    expect(await verifyToolList(200, answer(changed))).toMatch(/input schema differs/);
  });

  it('expects a tool the demo gains, and the peer registers it', () => {
    const grown: ToolSet = { tools: [...demo.tools!, extra] };
    const expected = listedTools(grown);
    expect(expected.map((t) => t.name)).toContain('brand_new');
    expect(expected.find((t) => t.name === 'brand_new')!.inputSchema).toEqual({ type: 'object' });
    expect(toolListProblem(demoListing(), expected)).toMatch(/brand_new/);
    expect(toolListProblem(demoListing(grown), expected)).toBeUndefined();
  });
});

describe('bench server/discover check', () => {
  const discovered = (result: unknown) => JSON.stringify({ jsonrpc: '2.0', id: 1, result });

  it('accepts a result with the 2026-07-28 version and the tools capability', () => {
    const result = { supportedVersions: ['2026-07-28'], capabilities: { tools: { listChanged: true } } };
    expect(verifyDiscover(200, discovered(result))).toBeUndefined();
  });

  it('rejects a result without the version, without the tools capability, or an error', () => {
    expect(
      verifyDiscover(200, discovered({ supportedVersions: ['2025-11-25'], capabilities: { tools: {} } })),
    ).toMatch(/supportedVersions/);
    expect(verifyDiscover(200, discovered({ supportedVersions: ['2026-07-28'], capabilities: {} }))).toMatch(
      /tools capability/,
    );
    expect(verifyDiscover(404, '{}')).toMatch(/HTTP 404/);
  });
});
