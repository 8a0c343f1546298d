// Peer server for the benchmark: the official TypeScript SDK v2 (`@modelcontextprotocol/server` with the Node adapter
// of `@modelcontextprotocol/node`) serving 2026-07-28 Streamable HTTP the way the SDK documents it: `createMcpHandler`
// with a per-request `McpServer` factory (modern-only, `legacy: 'reject'`), wrapped with `toNodeHandler` on a plain
// node:http server bound to loopback behind the SDK's Host and Origin guards. It lists the tools of `serve --tools
// demo` (names, titles, descriptions, schemas, annotations), handed to it by the harness as JSON in the environment
// variable PEER_TOOLS_ENV (bench/harness/demo-tools.ts reads them from the demo tool set); only `echo` is ever called.
// Usage: DURABLE_MCP_BENCH_PEER_TOOLS='[…]' node --import tsx bench/children/sdk-peer.ts
//   → prints `listening on http://127.0.0.1:PORT/mcp`.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  localhostHostValidation,
  localhostOriginValidation,
  toNodeHandler,
} from '@modelcontextprotocol/node';
import { createMcpHandler, fromJsonSchema, McpServer } from '@modelcontextprotocol/server';
import { HOST, PEER_TOOLS_ENV } from '../config.js';
import type { ListedTool } from '../harness/demo-tools.js';

const PATH = '/mcp';

const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] });

function readTools(): ListedTool[] {
  const raw = process.env[PEER_TOOLS_ENV];
  if (raw === undefined || raw === '') throw new Error(`${PEER_TOOLS_ENV} names no tools`);
  return JSON.parse(raw) as ListedTool[];
}

/** Each tool's registration, its schemas converted once: every request's server instance registers the same objects. */
const registrations = readTools().map((tool) => ({
  name: tool.name,
  config: {
    ...(tool.title === undefined ? {} : { title: tool.title }),
    ...(tool.description === undefined ? {} : { description: tool.description }),
    inputSchema: fromJsonSchema<Record<string, unknown>>(tool.inputSchema),
    ...(tool.outputSchema === undefined ? {} : { outputSchema: fromJsonSchema(tool.outputSchema) }),
    ...(tool.annotations === undefined ? {} : { annotations: tool.annotations }),
  },
}));

/** `echo` answers its text; the other tools are listed only (never called). */
const answer = (name: string) => (args: Record<string, unknown>) =>
  text(name === 'echo' ? String(args.text) : 'not available');

/** One server instance per request, as `createMcpHandler` expects of its factory. */
function createPeer() {
  const server = new McpServer({ name: 'sdk-peer', version: '1.0.0' });
  for (const { name, config } of registrations) server.registerTool(name, config, answer(name));
  return server;
}

const handler = createMcpHandler(createPeer, { legacy: 'reject' });
const serve = toNodeHandler(handler);
const validateHost = localhostHostValidation();
const validateOrigin = localhostOriginValidation();

const server = createServer({ keepAliveTimeout: 5_000 }, (req, res) => {
  if (!validateHost(req, res) || !validateOrigin(req, res)) return;
  if (new URL(req.url ?? '/', 'http://localhost').pathname !== PATH) {
    res.writeHead(404).end();
    return;
  }
  void serve(req, res);
});

server.listen(0, HOST, () =>
  console.log(`listening on http://${HOST}:${(server.address() as AddressInfo).port}${PATH}`),
);

process.on('SIGTERM', () => {
  void handler.close().finally(() => process.exit(0));
});
