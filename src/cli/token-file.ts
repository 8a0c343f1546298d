// Where the CLI keeps its sign-ins: one file of every server's tokens, readable by its owner only.
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';

/**
 * The token file: `$DURABLE_MCP_TOKEN_FILE`, else `$XDG_CONFIG_HOME/durable-mcp/tokens.json`, else
 * `~/.config/durable-mcp/tokens.json`. An empty variable counts as unset, as the XDG base directory spec says; a
 * relative `XDG_CONFIG_HOME` is ignored for the same reason.
 */
export function tokenFilePath(
  env: Readonly<Record<string, string | undefined>> = process.env,
  home: () => string = homedir,
): string {
  const named = env.DURABLE_MCP_TOKEN_FILE;
  if (named !== undefined && named !== '') return named;
  const config = env.XDG_CONFIG_HOME;
  const base = config !== undefined && isAbsolute(config) ? config : join(home(), '.config');
  return join(base, 'durable-mcp', 'tokens.json');
}
