// Tools whose MRTR rounds act on the world, counting what they did: for the one-time requestState tests.
import { defineTool, textResult, type InputRequest, type ToolSet } from '../../src/index.js';
import { mcpHeaders } from './cli.js';

export const TASKS_EXT = 'io.modelcontextprotocol/tasks';
export const IDEMPOTENCY_KEY = 'dev.durable-mcp/idempotencyKey';

const ask = (message: string): InputRequest => ({
  method: 'elicitation/create',
  params: {
    message,
    requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
  },
});

export interface OneTimeTools {
  toolSet: ToolSet;
  /** Transfers made by `transfer` (a synchronous tool), and runs of `provision`'s task handler. */
  counts: { transfers: number; provisioned: number };
}

export function oneTimeTools(): OneTimeTools {
  const counts = { transfers: 0, provisioned: 0 };
  const toolSet: ToolSet = {
    tools: [
      defineTool<{ amount: number }>({
        name: 'transfer',
        description: 'Moves money once the user confirms (a side effect of the confirmed round)',
        inputSchema: { type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] },
        handler: ({ amount }, ctx) => {
          const answer = ctx.input('confirm', ask(`Transfer ${amount}?`));
          if (answer.action !== 'accept') return textResult('Not transferred');
          counts.transfers++;
          return textResult(`Transferred ${amount} (transfer #${counts.transfers})`);
        },
      }),
      defineTool({
        name: 'provision',
        description: 'Asks for a go-ahead before its task is created, then provisions in the task',
        inputSchema: { type: 'object', properties: {} },
        task: {
          support: 'required',
          prepare: (_args, ctx) => {
            ctx.input('go', ask('Provision?'));
          },
        },
        handler: () => {
          counts.provisioned++;
          return textResult('Provisioned');
        },
      }),
    ],
  };
  return { toolSet, counts };
}

export interface ToolReply {
  result: Record<string, unknown>;
  error: { code: number; message: string } | undefined;
}

let nextId = 1;

/** One tools/call over HTTP; `caps` are the request's client capabilities. */
export async function callTool(
  url: string,
  params: Record<string, unknown>,
  caps: Record<string, unknown>,
  meta: Record<string, unknown> = {},
): Promise<ToolReply> {
  const id = nextId++;
  const res = await fetch(url, {
    method: 'POST',
    headers: mcpHeaders('tools/call', String(params.name)),
    body: JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': caps,
          ...meta,
        },
      },
    }),
  });
  const body = (await res.json()) as Record<string, unknown>;
  if (body.id !== id) throw new Error(`reply to ${String(body.id)}, not ${id}`);
  return {
    result: (body.result as Record<string, unknown> | undefined) ?? {},
    error: body.error as ToolReply['error'],
  };
}

/** The answer that accepts a question of these tools. */
export const yes = { action: 'accept', content: { ok: true } };

/** How many tasks the store keeps, of any status. */
export async function taskCount(store: {
  stats?: (now: number) => Promise<{ byStatus: Record<string, number> }>;
}): Promise<number> {
  const stats = await store.stats?.(Date.now());
  if (stats === undefined) throw new Error('the store counts no tasks');
  return Object.values(stats.byStatus).reduce((sum, n) => sum + n, 0);
}
