import { describe, expect, it } from 'vitest';
import { tokenFilePath } from './token-file.js';

const home = (): string => '/home/ada';

describe('the token file', () => {
  it('is $DURABLE_MCP_TOKEN_FILE when set', () => {
    const env = { DURABLE_MCP_TOKEN_FILE: '/run/t.json', XDG_CONFIG_HOME: '/cfg' };
    expect(tokenFilePath(env, home)).toBe('/run/t.json');
  });

  it('is under $XDG_CONFIG_HOME, else under ~/.config', () => {
    expect(tokenFilePath({ XDG_CONFIG_HOME: '/cfg' }, home)).toBe('/cfg/durable-mcp/tokens.json');
    expect(tokenFilePath({}, home)).toBe('/home/ada/.config/durable-mcp/tokens.json');
  });

  it('treats empty variables and a relative XDG_CONFIG_HOME as unset', () => {
    const env = { DURABLE_MCP_TOKEN_FILE: '', XDG_CONFIG_HOME: 'relative/cfg' };
    expect(tokenFilePath(env, home)).toBe('/home/ada/.config/durable-mcp/tokens.json');
    expect(tokenFilePath({ XDG_CONFIG_HOME: '' }, home)).toBe('/home/ada/.config/durable-mcp/tokens.json');
  });
});
