// `durable-mcp demo` prints the lesson's reference sequence byte for byte, the checks the lesson asks for, and shows
// the task survived a restart; `--output json` gives the same for scripts.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { BIN } from '../support/cli.js';

const REFERENCE = `id=0 resultType=complete status=ack
id=1 resultType=task status=working
id=2 resultType=complete status=working
id=3 resultType=complete status=input_required
id=4 resultType=complete status=ack
id=5 resultType=complete status=completed`;

const demo = (...args: string[]) =>
  spawnSync(process.execPath, [BIN, 'demo', ...args], {
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, DURABLE_MCP_DEMO_OUTLINE_MS: '600' },
  });

describe('durable-mcp demo', () => {
  it('prints the reference sequence exactly, then the checks, then the task after a restart', () => {
    const r = demo();
    expect(r.status).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines.slice(0, 6).join('\n')).toBe(REFERENCE);
    expect(lines.slice(6, 11)).toEqual([
      'check tasks/status: ok, method not found (-32601)',
      'check tasks/result: ok, method not found (-32601)',
      'check tasks/list: ok, method not found (-32601)',
      'check tools/list: ok, deterministic',
      'check Mcp-Name: ok, mirrors the task id on task methods; another id is refused (-32020)',
    ]);
    expect(lines.slice(11, 13)).toEqual([
      'restarting the server on the same store…',
      'id=6 resultType=complete status=completed (after restart: identical snapshot)',
    ]);
  });

  it('gives the same as one JSON document with --output json', () => {
    const r = demo('--output', 'json');
    expect(r.status).toBe(0);
    const doc = JSON.parse(r.stdout) as {
      responses: { id: number; resultType: string; status: string }[];
      checks: { check: string; ok: boolean }[];
      restart: { identical: boolean };
    };
    expect(
      doc.responses.map((s) => `id=${s.id} resultType=${s.resultType} status=${s.status}`).join('\n'),
    ).toBe(REFERENCE);
    expect(doc.checks.map((c) => [c.check, c.ok])).toEqual([
      ['tasks/status', true],
      ['tasks/result', true],
      ['tasks/list', true],
      ['tools/list', true],
      ['Mcp-Name', true],
    ]);
    expect(doc.restart.identical).toBe(true);
  });
});
