// The OAuth (auth/*) scenarios of the everything client: each signs in through the public `createOAuth` API with a
// non-interactive prompt (the authorization endpoint is fetched without following its redirect, whose Location is
// the URL the browser would come back to), then lists tools and calls one.
import { createClient, createOAuth, type OAuthOptions, type SignInPrompt } from 'durable-mcp/client';

type JsonObject = Record<string, unknown>;

/** The client ID metadata document URL the suite expects where the server supports them. */
const CIMD_CLIENT_METADATA_URL = 'https://conformance-test.local/client-metadata.json';
const CLIENT_INFO = { name: 'durable-mcp-everything-client', version: '0.1.0' };

const log = (...parts: unknown[]): void => console.log('[everything-client]', ...parts);

/** Approves every authorization request at once: the redirect's Location is where the code comes back. */
const autoApprove: SignInPrompt = {
  redirectUri: 'http://localhost:3000/callback',
  async authorize({ url, signal }) {
    const res = await fetch(url, { redirect: 'manual', ...(signal ? { signal } : {}) });
    const location = res.headers.get('location');
    await res.body?.cancel();
    if (location === null)
      throw new Error(`the authorization endpoint answered HTTP ${res.status} without a redirect`);
    return new URL(location, url);
  },
};

/** Signs in with `oauth`, then lists tools and calls the scenario server's tool. */
async function listAndCall(url: string, oauth: Partial<OAuthOptions> = {}): Promise<void> {
  const auth = createOAuth({
    serverUrl: url,
    clientName: 'durable-mcp-everything-client',
    prompt: autoApprove,
    ...oauth,
  });
  const client = createClient({ url, auth, clientInfo: CLIENT_INFO, tasks: false });
  try {
    await client.discover();
    const tools = await client.listTools();
    log('tools:', tools.map((t) => t.name).join(', '));
    const outcome = await client.callTool('test-tool', {});
    log('test-tool ->', JSON.stringify(outcome.kind === 'result' ? outcome.result : outcome.kind));
  } finally {
    await client.close();
  }
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

const AUTH_CODE_SCENARIOS = [
  'auth/metadata-default',
  'auth/metadata-var1',
  'auth/metadata-var2',
  'auth/metadata-var3',
  'auth/basic-cimd',
  'auth/scope-from-www-authenticate',
  'auth/scope-from-scopes-supported',
  'auth/scope-omitted-when-undefined',
  'auth/scope-step-up',
  'auth/scope-retry-limit',
  'auth/token-endpoint-auth-basic',
  'auth/token-endpoint-auth-post',
  'auth/token-endpoint-auth-none',
  'auth/resource-mismatch',
  'auth/offline-access-scope',
  'auth/offline-access-not-supported',
  'auth/authorization-server-migration',
  'auth/iss-supported',
  'auth/iss-not-advertised',
  'auth/iss-supported-missing',
  'auth/iss-wrong-issuer',
  'auth/iss-unexpected',
  'auth/iss-normalized',
  'auth/metadata-issuer-mismatch',
];

export const authScenarios: Record<string, (url: string, context: JsonObject) => Promise<void>> = {
  ...Object.fromEntries(
    AUTH_CODE_SCENARIOS.map((name) => [
      name,
      (url: string) => listAndCall(url, { clientMetadataUrl: CIMD_CLIENT_METADATA_URL }),
    ]),
  ),

  async 'auth/pre-registration'(url, context) {
    const clientId = str(context.client_id);
    if (clientId === undefined) throw new Error('MCP_CONFORMANCE_CONTEXT has no client_id');
    const clientSecret = str(context.client_secret);
    await listAndCall(url, { client: { clientId, ...(clientSecret ? { clientSecret } : {}) } });
  },

  async 'auth/client-credentials-basic'(url, context) {
    const clientId = str(context.client_id);
    const clientSecret = str(context.client_secret);
    if (clientId === undefined || clientSecret === undefined)
      throw new Error('MCP_CONFORMANCE_CONTEXT has no client_id and client_secret');
    await listAndCall(url, {
      prompt: undefined,
      client: { clientId, clientSecret, authMethod: 'client_secret_basic' },
      clientCredentials: true,
    });
  },

  async 'auth/client-credentials-jwt'(url, context) {
    const clientId = str(context.client_id);
    const privateKey = str(context.private_key_pem);
    if (clientId === undefined || privateKey === undefined)
      throw new Error('MCP_CONFORMANCE_CONTEXT has no client_id and private_key_pem');
    await listAndCall(url, {
      prompt: undefined,
      client: { clientId, authMethod: 'private_key_jwt' },
      clientCredentials: { privateKey, algorithm: str(context.signing_algorithm) ?? 'ES256' },
    });
  },
};
