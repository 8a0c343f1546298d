// `durable-mcp login --url URL`: signs in to an OAuth-protected MCP server and keeps its tokens for the other commands.
import { parseFlags } from '../args.js';
import { EXIT, jsonOutput, serverFromFlags } from '../client-flags.js';
import { reportError } from '../follow.js';
import { publicRecord, SIGN_IN_FLAGS, signInSession, withPrompt } from '../sign-in-session.js';
import { oneLine, printErr, printJson, printOut } from '../terminal-text.js';

export const loginUsage = `durable-mcp login [--url URL] [flags]   sign in to an OAuth-protected MCP server
  Prints the authorization URL (and opens it in the browser where there is a display), then takes the
  answer on a loopback redirect to 127.0.0.1; without a display, the device authorization grant where the
  server offers it. The tokens are kept per server and authorization server in the token file, and every
  client command (call, task, tools, discover, event) uses them and refreshes them as it goes.
  --url URL            server endpoint (default $DURABLE_MCP_URL or http://127.0.0.1:3000/mcp)
  --client-id ID       a client registered beforehand with the authorization server (default: dynamic
                       registration, where the server offers it)
  --client-secret S    its secret, for a confidential client (prefer $DURABLE_MCP_CLIENT_SECRET: the command
                       line is visible to other users of the host)
  --scope "A B"        scopes to ask for (default: those the server asks for, else all it lists)
  --no-browser         do not open a browser: open the printed URL yourself
  --paste              also take the address the browser was sent to (or the code) pasted on stdin, for a
                       browser on another host (offered anyway on a terminal without a browser)
  --device             use the device authorization grant where the server offers it
  --output json        print the sign-in as JSON on stdout (never its tokens)
Token file: $DURABLE_MCP_TOKEN_FILE, else $XDG_CONFIG_HOME/durable-mcp/tokens.json, else
~/.config/durable-mcp/tokens.json (created readable by its owner only).
Exit codes: 0 signed in; 2 usage; 3 the sign-in failed or the server cannot be reached.`;

export async function login(argv: string[]): Promise<number> {
  const { values } = parseFlags(argv, {
    url: { type: 'string' },
    output: { type: 'string' },
    ...SIGN_IN_FLAGS,
  });
  const json = jsonOutput(values);
  const { url } = serverFromFlags(values);
  const { session, prompt, tokenFile } = signInSession(url, values, true);
  try {
    const record = await withPrompt(prompt)(() =>
      session.signIn(typeof values.scope === 'string' ? { scope: values.scope } : {}),
    );
    if (json) printJson(publicRecord(record));
    else printOut(oneLine`Signed in to ${record.resource} (issuer ${record.issuer})`);
    if (!json) printErr(oneLine`tokens kept in ${tokenFile}`);
    return EXIT.ok;
  } catch (err) {
    return reportError(err, url);
  }
}
