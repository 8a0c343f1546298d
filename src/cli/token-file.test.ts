import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tokenFilePath } from './token-file.js';

describe('tokenFilePath', () => {
  const home = () => '/home/erin';
  it('takes DURABLE_MCP_TOKEN_FILE first, then XDG_CONFIG_HOME, then ~/.config', () => {
    expect(tokenFilePath({ DURABLE_MCP_TOKEN_FILE: '/t/x.json', XDG_CONFIG_HOME: '/cfg' }, home)).toBe(
      '/t/x.json',
    );
    expect(tokenFilePath({ XDG_CONFIG_HOME: '/cfg' }, home)).toBe(join('/cfg', 'durable-mcp', 'tokens.json'));
    expect(tokenFilePath({}, home)).toBe(join('/home/erin', '.config', 'durable-mcp', 'tokens.json'));
  });

  it('ignores an empty DURABLE_MCP_TOKEN_FILE and a relative XDG_CONFIG_HOME', () => {
    const fallback = join('/home/erin', '.config', 'durable-mcp', 'tokens.json');
    expect(tokenFilePath({ DURABLE_MCP_TOKEN_FILE: '', XDG_CONFIG_HOME: 'rel/cfg' }, home)).toBe(fallback);
  });
});
