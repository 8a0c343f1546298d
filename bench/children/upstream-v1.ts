// The upstream of the gateway rows: an MCP server written with the official TypeScript SDK v1 (`McpServer` of
// `@modelcontextprotocol/sdk`), serving Streamable HTTP statelessly the way the SDK's stateless example does: no
// session ids (`sessionIdGenerator: undefined`), a new transport and server for every request, JSON answers instead
// of SSE streams (`enableJsonResponse: true`), on a plain node:http server bound to loopback. One quick tool, `echo`,
// answers its `text` at once. The direct row sends it 2025-11-25 requests; the gateway rows front this same process.
// Usage: node --import tsx bench/children/upstream-v1.ts   → prints `listening on http://127.0.0.1:PORT/mcp`.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { HOST } from '../config.js';

const PATH = '/mcp';

/** One server per request, as the SDK's stateless example builds it. */
function build(): McpServer {
  const server = new McpServer({ name: 'bench-upstream-v1', version: '1.0.0' });
  server.registerTool(
    'echo',
    { description: 'Answers its text', inputSchema: { text: z.string() } },
    ({ text }) => ({ content: [{ type: 'text', text }] }),
  );
  return server;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return chunks.length === 0 ? undefined : (JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown);
}

function refuse(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32000, message } }));
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (new URL(req.url ?? '/', 'http://localhost').pathname !== PATH) return refuse(res, 404, 'Not found');
  // Stateless: no stream to open (GET) and no session to end (DELETE).
  if (req.method !== 'POST') return refuse(res, 405, 'Method not allowed.');
  let body: unknown;
  try {
    body = await readJson(req);
  } catch {
    return refuse(res, 400, 'Parse error');
  }
  const server = build();
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  res.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, body);
}

const http = createServer({ keepAliveTimeout: 5_000 }, (req, res) => {
  handle(req, res).catch((err: unknown) => {
    process.stderr.write(`upstream: ${err instanceof Error ? err.message : String(err)}\n`);
    if (!res.headersSent) refuse(res, 500, 'Internal server error');
  });
});

http.listen(0, HOST, () =>
  console.log(`listening on http://${HOST}:${(http.address() as AddressInfo).port}${PATH}`),
);

process.on('SIGTERM', () => http.close(() => process.exit(0)));
