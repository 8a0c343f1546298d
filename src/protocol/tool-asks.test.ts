// What a tool declares it asks for: the capabilities a client lacks for it, and the declarations refused at
// registration.
import { describe, expect, it } from 'vitest';
import { defineTool } from './define.js';
import { textResult } from './types.js';
import { Registry } from './registry.js';
import { asksProblem, missingForAsks } from './tool-asks.js';

describe('missingForAsks', () => {
  it('names what a client lacks, elicitation by mode', () => {
    expect(missingForAsks(['elicitation/create'], {})).toEqual({ elicitation: {} });
    expect(missingForAsks(['elicitation/create'], { elicitation: {} })).toBeUndefined();
    expect(missingForAsks(['elicitation/create:url'], { elicitation: {} })).toEqual({
      elicitation: { url: {} },
    });
    expect(missingForAsks(['elicitation/create', 'elicitation/create:url'], {})).toEqual({
      elicitation: { form: {}, url: {} },
    });
    expect(
      missingForAsks(['elicitation/create', 'elicitation/create:url'], { elicitation: { url: {} } }),
    ).toEqual({
      elicitation: { form: {} },
    });
    expect(missingForAsks(['sampling/createMessage', 'roots/list'], { roots: {} })).toEqual({ sampling: {} });
    expect(missingForAsks(undefined, {})).toBeUndefined();
    expect(missingForAsks([], {})).toBeUndefined();
  });
});

describe('asks at registration', () => {
  it('refuses anything but the four inputs, each once', () => {
    expect(asksProblem(['elicitation/create', 'roots/list'])).toBeUndefined();
    expect(asksProblem(['tools/call'])).toContain('"tools/call"');
    expect(asksProblem(['roots/list', 'roots/list'])).toContain('at most once');
    expect(asksProblem('roots/list')).toBe('asks must be an array');
    const tool = defineTool({ name: 't', asks: ['elicitation'] as never, handler: () => textResult('') });
    expect(() => new Registry([{ tools: [tool] }])).toThrow('tool "t": asks must list each of');
  });
});
