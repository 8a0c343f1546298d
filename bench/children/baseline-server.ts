// The bare node:http baseline (`baseline echo`): reads the POST body, JSON.parse, answers a JSON-RPC result echoing
// the id. With `--streams` (the memory baseline, `bare node:http open SSE stream`) every POST becomes an SSE stream
// that stays open. Prints `listening on http://127.0.0.1:PORT/`.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HOST } from '../config.js';

function sendBaseline(res: ServerResponse, status: number, payload: unknown): void {
  const body = JSON.stringify(payload);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

const PARSE_ERROR = { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } };

function answerBaseline(res: ServerResponse, text: string): void {
  let message: { id?: unknown } | null;
  try {
    message = JSON.parse(text) as typeof message;
  } catch {
    return sendBaseline(res, 400, PARSE_ERROR);
  }
  sendBaseline(res, 200, { jsonrpc: '2.0', id: message?.id ?? null, result: {} });
}

/** Open streams of `--streams`, held until the client goes away. */
const openStreams = new Set<ServerResponse>();

/**
 * The memory baseline: every POST becomes an SSE stream that stays open, with one `notifications/tasks` event
 * (status input_required) per task id in `params.notifications.taskIds` — the least a server holding a
 * subscription open can keep per stream (the response, its socket, a place in a set).
 */
function streamBaseline(res: ServerResponse, text: string): void {
  let taskIds: unknown;
  try {
    taskIds = (JSON.parse(text) as { params?: { notifications?: { taskIds?: unknown } } } | null)?.params
      ?.notifications?.taskIds;
  } catch {
    return sendBaseline(res, 400, PARSE_ERROR);
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const taskId of Array.isArray(taskIds) ? (taskIds as unknown[]) : []) {
    const event = {
      jsonrpc: '2.0',
      method: 'notifications/tasks',
      params: { taskId, status: 'input_required' },
    };
    res.write(`data: ${JSON.stringify(event)}\n\n`);
  }
  openStreams.add(res);
  res.on('close', () => openStreams.delete(res));
}

const answer = process.argv.includes('--streams') ? streamBaseline : answerBaseline;
const server = createServer({ keepAliveTimeout: 5_000 }, (req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => answer(res, Buffer.concat(chunks).toString('utf8')));
});
server.listen(0, HOST, () =>
  console.log(`listening on http://${HOST}:${(server.address() as AddressInfo).port}/`),
);
process.on('SIGTERM', () => process.exit(0));
