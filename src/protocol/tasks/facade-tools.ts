// The facade tools a model uses to follow a task handed back to a client without the tasks extension: status,
// respond and cancel, owner-scoped exactly like tasks/get, tasks/update and tasks/cancel.
import type { AuthInfo, HandlerContext } from '../tool-types.js';
import { defineTool, type ToolDefinition } from '../define.js';
import type { TaskStore } from '../../tasks/store.js';
import {
  LOOKUP_MISS_MESSAGES,
  ownerOf,
  type LookupMiss,
  type TaskOwner,
  type TaskSnapshot,
} from '../../tasks/task.js';
import { isTaskIdShape } from '../../tasks/ids.js';
import { isJsonObject, type JsonObject } from '../../wire/jsonrpc.js';
import { ProtocolError } from '../../wire/protocol-error.js';
import { ErrorCode } from '../../wire/codes.js';
import type { CallToolResult } from '../types.js';
import { describeTask, duration, type Fallback } from './fallback.js';
import { STREAM_ARGS, streamArgsProblem, withStreamChunks } from './facade-stream.js';

/** What the facade shares with the extension's own methods. */
export interface FacadeDeps {
  store: TaskStore;
  fallback: Fallback;
  now: () => number;
  /** Records a lookup miss (audit) and returns the error tasks/get would answer. */
  deny(auth: AuthInfo, method: string, taskId: string, miss: LookupMiss): ProtocolError;
  /** tasks/get's poll limit: ms to wait before polling again (0: go ahead). */
  pollWait(auth: AuthInfo, method: string, taskId: string): number;
  /** tasks/update's answer: writes the outstanding keys' answers; malformed ones throw -32602. */
  answer(auth: AuthInfo, taskId: string, task: TaskSnapshot, responses: JsonObject): Promise<string[]>;
  /** tasks/cancel: requests cancellation. */
  cancel(auth: AuthInfo, taskId: string): Promise<void>;
  /** Waits (up to the deadline) until the task is finished or waits for input. */
  settle(
    taskId: string,
    owner: TaskOwner,
    deadline: number,
    signal: AbortSignal,
  ): Promise<TaskSnapshot | LookupMiss>;
}

const TASK_ID = {
  type: 'string',
  description: 'The task id, from the result of the tool that started the task.',
};

const problem = (text: string): CallToolResult => ({ content: [{ type: 'text', text }], isError: true });

/** Whether an error refuses an answer (answerRefused): the task still waits for it. */
const refusesAnswer = (err: ProtocolError): boolean =>
  isJsonObject(err.data) && typeof err.data.inputKey === 'string';

/** The tool's answer to a failed lookup or a bad request: a tool error the model can act on. */
function failure(taskId: string, err: unknown, respond?: string): CallToolResult {
  if (!(err instanceof ProtocolError) || err.code !== ErrorCode.InvalidParams) throw err;
  if (respond !== undefined && refusesAnswer(err)) {
    const { inputKey, field, reason, placeholder } = err.data as Record<string, unknown>;
    const where = field === '' ? '' : `${String(field)}: `;
    const fill = placeholder === true ? ' with it in place of each placeholder' : '';
    return problem(
      `Refused: answer to "${String(inputKey)}": ${where}${String(reason)}. Nothing was recorded and task ` +
        `${taskId} still waits. Ask the user for their answer (do not make one up), then call ${respond} ` +
        `again${fill}.`,
    );
  }
  return problem(
    Object.values(LOOKUP_MISS_MESSAGES).includes(err.message)
      ? `${err.message}: ${taskId}. Use the taskId from the result of the tool that started the task; ` +
          'tasks are kept for a limited time after they end.'
      : err.message,
  );
}

function readId(deps: FacadeDeps, args: { taskId: string }, auth: AuthInfo, method: string): string {
  if (!isTaskIdShape(args.taskId)) throw deps.deny(auth, method, args.taskId, 'not_found');
  return args.taskId;
}

async function lookup(
  deps: FacadeDeps,
  auth: AuthInfo,
  method: string,
  taskId: string,
): Promise<TaskSnapshot> {
  const task = await deps.store.get(taskId, ownerOf(auth), deps.now());
  if (typeof task === 'string') throw deps.deny(auth, method, taskId, task);
  return task;
}

/** Waits for news (up to the budget), then describes the task for the model. */
async function report(
  deps: FacadeDeps,
  ctx: HandlerContext,
  method: string,
  taskId: string,
  waitMs = deps.fallback.budgetMs,
): Promise<CallToolResult> {
  const { names, budgetMs } = deps.fallback;
  const task = await deps.settle(taskId, ownerOf(ctx.auth), deps.now() + waitMs, ctx.signal);
  if (typeof task === 'string') throw deps.deny(ctx.auth, method, taskId, task);
  return describeTask(task, names, budgetMs) as unknown as CallToolResult;
}

/** The sentence telling how long a facade call may wait, if it waits. */
const waitsFor = (budgetMs: number): string =>
  budgetMs > 0 ? ` Waits up to ${duration(budgetMs)} for news before answering.` : '';

function statusTool(deps: FacadeDeps): ToolDefinition<never> {
  const { names } = deps.fallback;
  return defineTool<{ taskId: string; stream?: string; offset?: number }>({
    name: names.status,
    title: 'Background task status',
    description:
      'Reports on a background task that another tool of this server started (its taskId is in that tool’s ' +
      'result): what it is doing, the questions it waits on, or its result once it is done; with `stream`, at ' +
      'once, with the partial results it appended to that stream from `offset` on.' +
      waitsFor(deps.fallback.budgetMs),
    inputSchema: {
      type: 'object',
      properties: { taskId: TASK_ID, ...STREAM_ARGS },
      required: ['taskId'],
    },
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    handler: async (args, ctx) => {
      try {
        const id = readId(deps, args, ctx.auth, names.status);
        const wait = deps.pollWait(ctx.auth, names.status, id);
        if (wait > 0) {
          return problem(
            `Polling too fast: wait ${Math.ceil(wait / 1000)} s, then call ${names.status} again.`,
          );
        }
        const wrong = streamArgsProblem(args.stream, args.offset);
        if (wrong !== undefined) return problem(wrong);
        // With a stream, the chunks so far are the news: answered at once.
        const result = await report(deps, ctx, names.status, id, args.stream === undefined ? undefined : 0);
        if (args.stream === undefined) return result;
        const address = { taskId: id, name: args.stream, offset: args.offset ?? 0 };
        return await withStreamChunks(deps.store, ownerOf(ctx.auth), deps.now(), result, address);
      } catch (err) {
        return failure(args.taskId, err);
      }
    },
  });
}

function respondTool(deps: FacadeDeps): ToolDefinition<never> {
  const { names } = deps.fallback;
  return defineTool<{ taskId: string; inputResponses: JsonObject }>({
    name: names.respond,
    title: 'Answer a background task',
    description:
      `Answers the questions a background task waits on, as ${names.status} lists them (one or more at once, ` +
      `keyed like its inputRequests), then reports on the task like ${names.status}.` +
      waitsFor(deps.fallback.budgetMs),
    inputSchema: {
      type: 'object',
      properties: {
        taskId: TASK_ID,
        inputResponses: {
          type: 'object',
          description:
            'Answers keyed by question: for a question (elicitation) {"action":"accept","content":{…}} or ' +
            '{"action":"decline"}.',
          additionalProperties: { type: 'object' },
        },
      },
      required: ['taskId', 'inputResponses'],
    },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    handler: async (args, ctx) => {
      try {
        const id = readId(deps, args, ctx.auth, names.respond);
        const task = await lookup(deps, ctx.auth, names.respond, id);
        const ignored = await deps.answer(ctx.auth, id, task, args.inputResponses);
        const result = await report(deps, ctx, names.respond, id);
        if (ignored.length === 0) return result;
        const note = `Not waiting for ${ignored.map((k) => `"${k}"`).join(', ')}: ignored.`;
        return { ...result, content: [{ type: 'text', text: note }, ...result.content] };
      } catch (err) {
        return failure(args.taskId, err, names.respond);
      }
    },
  });
}

function cancelTool(deps: FacadeDeps): ToolDefinition<never> {
  const { names } = deps.fallback;
  return defineTool<{ taskId: string }>({
    name: names.cancel,
    title: 'Stop a background task',
    description:
      'Stops a background task that another tool of this server started, and reports how it ended.',
    inputSchema: { type: 'object', properties: { taskId: TASK_ID }, required: ['taskId'] },
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    handler: async (args, ctx) => {
      try {
        const id = readId(deps, args, ctx.auth, names.cancel);
        await deps.cancel(ctx.auth, id);
        return await report(deps, ctx, names.cancel, id);
      } catch (err) {
        return failure(args.taskId, err);
      }
    },
  });
}

export function facadeTools(deps: FacadeDeps): ToolDefinition<never>[] {
  return [statusTool(deps), respondTool(deps), cancelTool(deps)];
}
