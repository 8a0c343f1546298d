import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { BIN } from '../support/cli.js';

describe('durable-mcp demo', () => {
  it('prints one line per response through the whole flow and shows the task survived a restart', () => {
    const r = spawnSync(process.execPath, [BIN, 'demo'], {
      encoding: 'utf8',
      timeout: 60_000,
      env: { ...process.env, DURABLE_MCP_DEMO_OUTLINE_MS: '600' },
    });
    expect(r.status).toBe(0);
    const lines = r.stdout.split('\n').filter((l) => l.startsWith('id='));
    const shapes = lines.map((l) => l.replace(/^id=\d+ /, '').replace(/ taskId=\S+/, ''));
    expect(shapes).toEqual([
      'resultType=complete status=-',
      'resultType=task status=working',
      'resultType=complete status=working',
      'resultType=complete status=input_required',
      'resultType=complete status=-',
      'resultType=complete status=completed',
      'resultType=complete status=completed (after restart: identical snapshot)',
    ]);
    const ids = lines.map((l) => Number(/^id=(\d+)/.exec(l)?.[1]));
    expect([...ids].sort((a, b) => a - b)).toEqual(ids); // ids increase
  });
});
