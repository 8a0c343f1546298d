// Peer server for the benchmark: the official TypeScript SDK v2 (`@modelcontextprotocol/server` with the Node adapter
// of `@modelcontextprotocol/node`) serving 2026-07-28 Streamable HTTP the way the SDK documents it: `createMcpHandler`
// with a per-request `McpServer` factory (modern-only, `legacy: 'reject'`), wrapped with `toNodeHandler` on a plain
// node:http server bound to loopback behind the SDK's Host and Origin guards. It lists the same five tools as
// `serve --tools demo` (names, titles, descriptions, schemas, annotations); only `echo` is ever called.
// Usage: node --import tsx bench/children/sdk-peer.ts   → prints `listening on http://127.0.0.1:PORT/mcp`.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  localhostHostValidation,
  localhostOriginValidation,
  toNodeHandler,
} from '@modelcontextprotocol/node';
import { createMcpHandler, fromJsonSchema, McpServer } from '@modelcontextprotocol/server';

const HOST = '127.0.0.1';
const PATH = '/mcp';

const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] });
const readOnly = { readOnlyHint: true, idempotentHint: true };

// Schemas are converted once; every request's server instance registers the same objects.
const schemas = {
  report: fromJsonSchema<{ size?: string }>({
    type: 'object',
    properties: { size: { type: 'string', enum: ['small', 'medium', 'large'], default: 'small' } },
  }),
  reportOut: fromJsonSchema<{ size: string; approved: boolean; sections?: unknown[] }>({
    type: 'object',
    properties: { size: { type: 'string' }, approved: { type: 'boolean' }, sections: { type: 'array' } },
    required: ['size', 'approved'],
  }),
  echo: fromJsonSchema<{ text: string }>({
    type: 'object',
    properties: { text: { type: 'string' } },
    required: ['text'],
  }),
  add: fromJsonSchema<{ a: number; b: number }>({
    type: 'object',
    properties: { a: { type: 'number' }, b: { type: 'number' } },
    required: ['a', 'b'],
  }),
  addOut: fromJsonSchema<{ sum: number }>({
    type: 'object',
    properties: { sum: { type: 'number' } },
    required: ['sum'],
  }),
  greet: fromJsonSchema({ type: 'object' }),
  wait: fromJsonSchema<{ ms: number }>({
    type: 'object',
    properties: { ms: { type: 'integer', minimum: 0, maximum: 60_000 } },
    required: ['ms'],
  }),
};

/** One server instance per request, as `createMcpHandler` expects of its factory. */
function createPeer() {
  const server = new McpServer({ name: 'sdk-peer', version: '1.0.0' });
  server.registerTool(
    'generate_report',
    {
      title: 'Generate a report',
      description:
        'Prepares an outline, asks you to approve it, then writes the report. Runs as a durable task.',
      inputSchema: schemas.report,
      outputSchema: schemas.reportOut,
    },
    ({ size = 'small' }) => ({ ...text('not available'), structuredContent: { size, approved: false } }),
  );
  server.registerTool(
    'echo',
    {
      title: 'Echo',
      description: 'Returns the text it was given.',
      inputSchema: schemas.echo,
      annotations: readOnly,
    },
    ({ text: value }) => text(value),
  );
  server.registerTool(
    'add',
    {
      title: 'Add two numbers',
      description: 'Adds a and b.',
      inputSchema: schemas.add,
      outputSchema: schemas.addOut,
      annotations: readOnly,
    },
    ({ a, b }) => ({ ...text(String(a + b)), structuredContent: { sum: a + b } }),
  );
  server.registerTool(
    'greet_person',
    {
      title: 'Greet a person (asks for their name)',
      description: 'Asks the user for a name through elicitation, then greets them.',
      inputSchema: schemas.greet,
    },
    () => text('Hello, stranger!'),
  );
  server.registerTool(
    'wait',
    {
      title: 'Wait',
      description:
        'Waits the given milliseconds (at most 60000), then answers; stops early if the client goes away.',
      inputSchema: schemas.wait,
    },
    ({ ms }) => text(`waited ${ms} ms`),
  );
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
