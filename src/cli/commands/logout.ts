// `durable-mcp logout --url URL`: forgets the sign-in to a server, revoking its tokens where the server supports it.
import { parseFlags } from '../args.js';
import { EXIT, jsonOutput, serverFromFlags } from '../client-flags.js';
import { reportError } from '../follow.js';
import { signInSession } from '../sign-in-session.js';
import { oneLine, printJson, printOut } from '../terminal-text.js';

export const logoutUsage = `durable-mcp logout [--url URL] [--output json]   forget the sign-in to a server
  Revokes its tokens first where the authorization server supports revocation, then removes them from the
  token file (see durable-mcp login --help). Exits 0 also when there was no sign-in to forget, and says so.
  --url URL        server endpoint (default $DURABLE_MCP_URL or http://127.0.0.1:3000/mcp)
  --output json    print {"removed":…,"revoked":…} on stdout
Exit codes: 0 signed out (or nothing to do); 2 usage; 3 the token file or the server failed.`;

export async function logout(argv: string[]): Promise<number> {
  const { values } = parseFlags(argv, { url: { type: 'string' }, output: { type: 'string' } });
  const json = jsonOutput(values);
  const { url } = serverFromFlags(values);
  const { session } = signInSession(url, values, false);
  try {
    const { removed, revoked } = await session.signOut();
    if (json) printJson({ removed, revoked });
    else if (!removed) printOut(oneLine`not signed in to ${url}: nothing to do`);
    else if (revoked) printOut(oneLine`Signed out of ${url}: the tokens were revoked and removed`);
    else
      printOut(
        oneLine`Signed out of ${url}: the tokens were removed (not revoked: the authorization server offers no revocation, or there were none; they stay valid until they expire)`,
      );
    return EXIT.ok;
  } catch (err) {
    return reportError(err, url);
  }
}
