import { describe, expect, it } from 'vitest';
import { parseStreamUri, streamNameProblem, streamUri } from './stream-uri.js';

describe('task stream URIs', () => {
  it('round-trips a task id, a name and an offset', () => {
    const uri = streamUri('task-1', 'out.log_2', 12);
    expect(uri).toBe('durable-mcp://tasks/task-1/streams/out.log_2?offset=12');
    expect(parseStreamUri(uri)).toEqual({
      taskId: 'task-1',
      name: 'out.log_2',
      offset: 12,
      uri: 'durable-mcp://tasks/task-1/streams/out.log_2',
    });
    expect(streamUri('task-1', 'out', 0)).toBe('durable-mcp://tasks/task-1/streams/out');
    expect(parseStreamUri('durable-mcp://tasks/a%2Fb/streams/out')?.taskId).toBe('a/b');
  });

  it('names no stream for another scheme, a bad name, a bad offset or broken escapes', () => {
    for (const uri of [
      'file:///tasks/t/streams/out',
      'durable-mcp://tasks/t/streams/',
      'durable-mcp://tasks/t/streams/.hidden',
      'durable-mcp://tasks/t/streams/a/b',
      `durable-mcp://tasks/t/streams/${'x'.repeat(101)}`,
      'durable-mcp://tasks/t/streams/out?offset=-1',
      'durable-mcp://tasks/t/streams/out?offset=01',
      'durable-mcp://tasks/t/streams/out?offset=1e3',
      'durable-mcp://tasks/t/streams/out?offset=9999999999999999',
      'durable-mcp://tasks/t/streams/out?x=1',
      'durable-mcp://tasks/%E0%A4%A/streams/out',
    ])
      expect(parseStreamUri(uri), uri).toBeUndefined();
  });

  it('says what is wrong with a name', () => {
    expect(streamNameProblem('out')).toBeUndefined();
    expect(streamNameProblem(3)).toBe('the name must be a string');
    expect(streamNameProblem('')).toMatch(/1 to 100 letters/);
    expect(streamNameProblem('a b')).toMatch(/1 to 100 letters/);
  });
});
