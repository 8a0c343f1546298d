// The bench's tool module: every task its tools run outlives any benchmark run.
import { describe, expect, it } from 'vitest';
import { TASK_TTL_MS, tools } from './tools.mjs';

/** Longer than any run the presets make (a default run takes some 15 minutes), with room for long custom runs. */
const LONGEST_RUN_MS = 6 * 3_600_000;

describe('bench tools', () => {
  it('keep every task they run alive longer than any run (rows read and subscribe to their setup tasks throughout)', () => {
    expect(TASK_TTL_MS).toBeGreaterThan(LONGEST_RUN_MS);
    for (const tool of tools)
      expect({ tool: tool.name, ttlMs: tool.task?.ttlMs }).toEqual({ tool: tool.name, ttlMs: TASK_TTL_MS });
  });
});
