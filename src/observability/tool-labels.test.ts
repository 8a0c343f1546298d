// The `tool` label values: the served tools' names, at most a cap of them, "other" for the rest.
import { describe, expect, it } from 'vitest';
import { createToolLabels, MAX_TOOL_LABELS, OTHER_TOOL } from './tool-labels.js';

describe('tool labels', () => {
  it('name the served tools and count any other tool as "other"', () => {
    const label = createToolLabels({ tools: ['search', 'generate_report', 'search'] });
    expect(['search', 'generate_report', 'removed_tool', undefined].map(label)).toEqual([
      'search',
      'generate_report',
      OTHER_TOOL,
      OTHER_TOOL,
    ]);
  });

  it('give the first MAX_TOOL_LABELS served tools a label of their own, in the order they are served', () => {
    const tools = Array.from({ length: MAX_TOOL_LABELS + 50 }, (_, i) => `tool_${i}`);
    const label = createToolLabels({ tools });
    expect(label(`tool_${MAX_TOOL_LABELS - 1}`)).toBe(`tool_${MAX_TOOL_LABELS - 1}`);
    expect(label(`tool_${MAX_TOOL_LABELS}`)).toBe(OTHER_TOOL);
    expect(new Set(tools.map(label)).size).toBe(MAX_TOOL_LABELS + 1);
  });

  it('without a registry, label the first names seen up to the cap', () => {
    const label = createToolLabels({ max: 2 });
    expect(['a', 'b', 'c', 'a', 'b', 'c'].map(label)).toEqual(['a', 'b', OTHER_TOOL, 'a', 'b', OTHER_TOOL]);
  });
});
