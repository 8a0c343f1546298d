// Where the CLI keeps its sign-ins (`durable-mcp login` writes them; `call`, `task`, `tools` and `gateway
// --upstream-sign-in` read them): $DURABLE_MCP_TOKEN_FILE, else $XDG_CONFIG_HOME/durable-mcp/tokens.json, else
// ~/.config/durable-mcp/tokens.json.
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';

/** The token file's path for this environment (a relative XDG_CONFIG_HOME is ignored, as the XDG spec says). */
export function tokenFilePath(
  env: Readonly<Record<string, string | undefined>> = process.env,
  home: () => string = homedir,
): string {
  const file = env.DURABLE_MCP_TOKEN_FILE;
  if (file !== undefined && file !== '') return file;
  const config = env.XDG_CONFIG_HOME;
  const base = config !== undefined && isAbsolute(config) ? config : join(home(), '.config');
  return join(base, 'durable-mcp', 'tokens.json');
}
