// The fallback for clients without the tasks extension: options, per-tool budgets, widened outputSchemas and hand-backs.
import { describe, expect, it } from 'vitest';
import type { TaskPolicy } from '../define.js';
import type { TaskSnapshot } from '../../tasks/task.js';
import type { JsonObject } from '../../wire/jsonrpc.js';
import { META_BACKGROUND_TASK, META_ERROR_REF, META_SERVER_INFO } from '../../wire/meta-keys.js';
import { compileSchema } from '../schema-validation.js';
import {
  DEFAULT_FALLBACK_BUDGET_MS,
  HANDLE_SCHEMA,
  describeTask,
  duration,
  resolveFallback,
  toolBudget,
  withHandle,
} from './fallback.js';

const ID = 'task-0123456789abcdef';
const names = resolveFallback(undefined).names;

const snapshot = (over: Partial<TaskSnapshot>): TaskSnapshot => ({
  id: ID,
  status: 'working',
  statusMessage: undefined,
  createdAt: 1_000,
  updatedAt: 2_000,
  ttlMs: 60_000,
  pollIntervalMs: 1_000,
  inputRequests: {},
  result: undefined,
  error: undefined,
  ...over,
});

/** The parts of a describeTask result the assertions read. */
interface Described {
  content: { type: string; text?: string }[];
  structuredContent: JsonObject & { instructions: string };
  isError?: boolean;
  _meta: JsonObject;
}
const describe_ = (task: TaskSnapshot, budgetMs = 20_000, opening?: string): Described =>
  describeTask(task, names, budgetMs, opening) as unknown as Described;

const elicitForm = (requestedSchema: JsonObject, message = 'Choose the options.'): JsonObject => ({
  method: 'elicitation/create',
  params: { mode: 'form', message, requestedSchema },
});

describe('resolveFallback', () => {
  it('is on by default, with a 20 s budget, required tools left out and the task_ facade names', () => {
    const expected = {
      enabled: true,
      budgetMs: 20_000,
      required: false,
      names: { status: 'task_status', respond: 'task_respond', cancel: 'task_cancel' },
    };
    expect(DEFAULT_FALLBACK_BUDGET_MS).toBe(20_000);
    expect(resolveFallback(undefined)).toEqual(expected);
    expect(resolveFallback({})).toEqual(expected);
  });
  it('is turned off by false or enabled: false', () => {
    expect(resolveFallback(false).enabled).toBe(false);
    expect(resolveFallback({ enabled: false }).enabled).toBe(false);
    expect(resolveFallback({ enabled: true }).enabled).toBe(true);
  });
  it('takes a budget, the required switch and a prefix for the facade names', () => {
    expect(resolveFallback({ budgetMs: 0, required: true, toolPrefix: 'bg_' })).toEqual({
      enabled: true,
      budgetMs: 0,
      required: true,
      names: { status: 'bg_status', respond: 'bg_respond', cancel: 'bg_cancel' },
    });
    expect(resolveFallback({ budgetMs: 1_500 }).budgetMs).toBe(1_500);
  });
  it('rejects a budget that is not a whole number of ms >= 0', () => {
    for (const budgetMs of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => resolveFallback({ budgetMs })).toThrow(/fallback budget/);
    }
  });
});

describe('toolBudget', () => {
  const server = resolveFallback({ budgetMs: 5_000 });
  const serverRequired = resolveFallback({ budgetMs: 5_000, required: true });
  const off = resolveFallback(false);
  const cases: [string, TaskPolicy | undefined, ReturnType<typeof resolveFallback>, number | undefined][] = [
    ['no task policy', undefined, server, undefined],
    ['never', { support: 'never' }, server, undefined],
    ['never, even opted in', { support: 'never', fallback: true }, server, undefined],
    ['optional', { support: 'optional' }, server, 5_000],
    ['optional, fallback: true', { support: 'optional', fallback: true }, server, 5_000],
    ['optional, fallback: {}', { support: 'optional', fallback: {} }, server, 5_000],
    ['optional, its own budget', { support: 'optional', fallback: { budgetMs: 100 } }, server, 100],
    ['optional, fallback: false', { support: 'optional', fallback: false }, server, undefined],
    ['required', { support: 'required' }, server, undefined],
    ['required, fallback: true', { support: 'required', fallback: true }, server, 5_000],
    ['required, its own budget', { support: 'required', fallback: { budgetMs: 250 } }, server, 250],
    ['required, its own budget of 0', { support: 'required', fallback: { budgetMs: 0 } }, server, 0],
    ['required, server required: true', { support: 'required' }, serverRequired, 5_000],
    [
      'required, server required: true, fallback: false',
      { support: 'required', fallback: false },
      serverRequired,
      undefined,
    ],
    ['server off, optional', { support: 'optional' }, off, undefined],
    ['server off, required with fallback: true', { support: 'required', fallback: true }, off, undefined],
    ['server off, its own budget', { support: 'optional', fallback: { budgetMs: 100 } }, off, undefined],
  ];
  it.each(cases)('%s', (_label, policy, fallback, expected) => {
    expect(toolBudget(policy, fallback)).toBe(expected);
  });
});

describe('withHandle', () => {
  const handBack = describe_(snapshot({ status: 'working' })).structuredContent;
  const asked = describe_(
    snapshot({
      status: 'input_required',
      inputRequests: { q: elicitForm({ type: 'object', properties: { ok: { type: 'boolean' } } }) },
    }),
  ).structuredContent;

  it('admits the original values and a hand-back, and nothing else', () => {
    const schema: JsonObject = {
      type: 'object',
      properties: { total: { type: 'number' }, items: { type: 'array', items: { type: 'string' } } },
      required: ['total'],
      additionalProperties: false,
    };
    const original = compileSchema(schema, 'structuredContent');
    const widened = compileSchema(withHandle(schema), 'structuredContent');
    const value = { total: 3, items: ['a', 'b'] };
    expect(original(value).ok).toBe(true);
    expect(widened(value).ok).toBe(true);
    for (const back of [handBack, asked]) {
      expect(original(back).ok).toBe(false);
      expect(widened(back).ok).toBe(true);
    }
    for (const bad of [
      { total: 'three' },
      { total: 1, extra: true },
      { taskId: ID },
      { taskId: ID, status: 'done', instructions: 'x' },
      { taskId: ID, status: 'working' },
      'text',
      null,
    ]) {
      expect(widened(bad).ok).toBe(false);
    }
  });
  it('keeps $schema and $defs at the root, so references still resolve', () => {
    const schema: JsonObject = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      $defs: {
        Item: {
          type: 'object',
          properties: { sku: { type: 'string' } },
          required: ['sku'],
          additionalProperties: false,
        },
      },
      type: 'object',
      properties: { items: { type: 'array', items: { $ref: '#/$defs/Item' } } },
      required: ['items'],
    };
    const widenedSchema = withHandle(schema);
    expect(widenedSchema.$schema).toBe(schema.$schema);
    expect(widenedSchema.$defs).toEqual(schema.$defs);
    expect((widenedSchema.anyOf as JsonObject[])[0]).not.toHaveProperty('$defs');
    expect((widenedSchema.anyOf as JsonObject[])[0]).not.toHaveProperty('$schema');

    const original = compileSchema(schema, 'structuredContent');
    const widened = compileSchema(widenedSchema, 'structuredContent');
    const value = { items: [{ sku: 'a-1' }] };
    expect(original(value)).toEqual({ ok: true });
    expect(widened(value)).toEqual({ ok: true });
    expect(original(handBack).ok).toBe(false);
    expect(widened(handBack)).toEqual({ ok: true });
    // The referenced definition is enforced, not skipped as unresolvable.
    expect(widened({ items: [{ sku: 1 }] }).ok).toBe(false);
    expect(widened({ items: [{ sku: 'a', colour: 'red' }] }).ok).toBe(false);
  });
  it('rebases references into the schema itself, so they mean what they meant', () => {
    const pointer: JsonObject = {
      type: 'object',
      properties: { a: { type: 'string' }, b: { $ref: '#/properties/a' } },
    };
    const widenedPointer = compileSchema(withHandle(pointer));
    expect(widenedPointer({ a: 'x', b: 'y' }).ok).toBe(true);
    expect(widenedPointer({ a: 'x', b: 3 }).ok).toBe(false);
    const tree: JsonObject = {
      type: 'object',
      properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#' } } },
      required: ['name'],
      additionalProperties: false,
    };
    const widenedTree = compileSchema(withHandle(tree));
    expect(widenedTree({ name: 'r', children: [{ name: 'c', children: [] }] }).ok).toBe(true);
    // A child is a node of the original shape, never a hand-back.
    expect(
      widenedTree({ name: 'r', children: [{ taskId: 't', status: 'working', instructions: 'x' }] }).ok,
    ).toBe(false);
    expect(widenedTree(handBack).ok).toBe(true);
  });

  it('keeps draft-07 definitions resolvable too', () => {
    const schema: JsonObject = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      definitions: { Count: { type: 'integer', minimum: 0 } },
      type: 'object',
      properties: { count: { $ref: '#/definitions/Count' } },
      required: ['count'],
    };
    const widened = compileSchema(withHandle(schema), 'structuredContent');
    expect(widened({ count: 2 })).toEqual({ ok: true });
    expect(widened({ count: -1 }).ok).toBe(false);
    expect(widened(handBack)).toEqual({ ok: true });
  });
  it('leaves the schema it widens untouched', () => {
    const schema: JsonObject = {
      $defs: { N: { type: 'number' } },
      type: 'object',
      properties: { n: { $ref: '#/$defs/N' } },
    };
    const copy = structuredClone(schema);
    withHandle(schema);
    expect(schema).toEqual(copy);
  });
});

describe('duration', () => {
  it('puts a budget in words', () => {
    expect(duration(0)).toBe('0 ms');
    expect(duration(500)).toBe('500 ms');
    expect(duration(999)).toBe('999 ms');
    expect(duration(1_000)).toBe('1 s');
    expect(duration(1_500)).toBe('1.5 s');
    expect(duration(20_000)).toBe('20 s');
  });
});

describe('describeTask', () => {
  const handle = compileSchema(HANDLE_SCHEMA, 'structuredContent');

  it('points a working task to the status tool', () => {
    const out = describe_(snapshot({ status: 'working', statusMessage: 'Indexing 3 of 9' }));
    const text = out.structuredContent.instructions;
    expect(out.content).toEqual([{ type: 'text', text }]);
    expect(text).toContain(ID);
    expect(text).toContain('Indexing 3 of 9');
    expect(text).toContain(`call task_status with {"taskId":"${ID}"} (it waits up to 20 s for news).`);
    expect(text).toContain(`call task_cancel with {"taskId":"${ID}"}`);
    expect(out.structuredContent).toEqual({
      taskId: ID,
      status: 'working',
      statusMessage: 'Indexing 3 of 9',
      instructions: text,
      next: { tool: 'task_status', arguments: { taskId: ID } },
    });
    expect(out._meta).toEqual({ [META_BACKGROUND_TASK]: { taskId: ID, status: 'working' } });
    expect(out).not.toHaveProperty('isError');
  });
  it('opens with the given text, states the wait and names the configured facade tools', () => {
    const bg = resolveFallback({ toolPrefix: 'bg_' }).names;
    const out = describeTask(
      snapshot({ status: 'working' }),
      bg,
      1_500,
      'search goes on.',
    ) as unknown as Described;
    const text = out.structuredContent.instructions;
    expect(text.split('\n')[0]).toBe('search goes on.');
    expect(text).toContain('call bg_status with');
    expect(text).toContain('(it waits up to 1.5 s for news)');
    expect(text).toContain('call bg_cancel with');
    expect(text).not.toContain('task_status');
    expect(out.structuredContent.next).toEqual({ tool: 'bg_status', arguments: { taskId: ID } });
    expect(out.structuredContent).not.toHaveProperty('statusMessage');
    expect(describe_(snapshot({ status: 'working' }), 500).structuredContent.instructions).toContain(
      '(it waits up to 500 ms for news)',
    );
    expect(describe_(snapshot({ status: 'working' }), 0).structuredContent.instructions).not.toContain(
      'waits up to',
    );
  });
  it('describes the fields of a form elicitation and gives an answer of their types', () => {
    const request = elicitForm(
      {
        type: 'object',
        properties: {
          confirm: { type: 'boolean', title: 'Confirm the order' },
          size: { type: 'string', enum: ['S', 'M', 'L'] },
          count: { type: 'integer', default: 3 },
          ratio: { type: 'number' },
          note: { type: 'string', description: 'Anything else' },
          tags: { type: 'array' },
        },
        required: ['confirm', 'size'],
      },
      'Pick the order options',
    );
    const task = snapshot({ status: 'input_required', inputRequests: { order: request } });
    const out = describe_(task);
    const text = out.structuredContent.instructions;
    expect(text).toContain(`Task ${ID} is waiting`);
    expect(text).toContain(
      '- "order": Pick the order options. Fields: confirm (boolean, required): Confirm the order; ' +
        'size (string, one of "S", "M", "L", required); count (integer); ratio (number); ' +
        'note (string): Anything else; tags (array).',
    );
    const args = {
      taskId: ID,
      inputResponses: {
        order: {
          action: 'accept',
          content: { confirm: true, size: 'S', count: 3, ratio: 0, note: '…', tags: [] },
        },
      },
    };
    expect(out.structuredContent.next).toEqual({ tool: 'task_respond', arguments: args });
    expect(text).toContain(`call task_respond with ${JSON.stringify(args)}`);
    expect(text).toContain('{"action":"decline"}');
    expect(text).toContain(`call task_cancel with {"taskId":"${ID}"}`);
    expect(out.structuredContent.inputRequests).toEqual({ order: request });
    expect(out._meta).toEqual({ [META_BACKGROUND_TASK]: { taskId: ID, status: 'input_required' } });
    expect(out).not.toHaveProperty('isError');
  });
  it('gives valid examples for defaults, listed choices and bounds, and no stray space without a message', () => {
    const request = elicitForm(
      {
        type: 'object',
        properties: {
          level: { type: 'string', enum: ['low', 'high'], default: 'high' },
          colour: {
            type: 'string',
            oneOf: [
              { const: 'r', title: 'Red' },
              { const: 'g', title: 'Green' },
            ],
          },
          picks: { type: 'array', items: { enum: ['a', 'b'] }, minItems: 1 },
          amount: { type: 'number', minimum: 5 },
        },
      },
      '',
    );
    const out = describe_(snapshot({ status: 'input_required', inputRequests: { q: request } }));
    const next = out.structuredContent.next as { arguments: { inputResponses: JsonObject } };
    expect(next.arguments.inputResponses.q).toEqual({
      action: 'accept',
      content: { level: 'high', colour: 'r', picks: ['a'], amount: 5 },
    });
    const text = out.structuredContent.instructions;
    expect(text).toContain(
      '- "q": Fields: level (string, one of "low", "high"); colour (string, one of "r", "g")',
    );
    expect(text).toContain('picks (array, any of "a", "b")');
  });

  it('gives each kind of input request an answer of its shape', () => {
    const inputRequests: Record<string, JsonObject> = {
      login: {
        method: 'elicitation/create',
        params: { mode: 'url', message: 'Sign in to the store', url: 'https://example.com/login' },
      },
      draft: {
        method: 'sampling/createMessage',
        params: { messages: [{ role: 'user', content: { type: 'text', text: 'Summarise' } }], maxTokens: 50 },
      },
      dirs: { method: 'roots/list' },
      other: { method: 'custom/ask', params: { q: 1 } },
    };
    const out = describe_(snapshot({ status: 'input_required', inputRequests }));
    const text = out.structuredContent.instructions;
    expect(text).toContain(
      '- "login": Sign in to the store. The user must open https://example.com/login and finish there.',
    );
    expect(text).toContain('- "draft": A language model completion is requested: ');
    expect(text).toContain('"Summarise"');
    expect(text).toContain('- "dirs": The task asks for the root directories');
    expect(text).toContain('- "other": A custom/ask request: {"q":1}.');
    expect(out.structuredContent.next).toEqual({
      tool: 'task_respond',
      arguments: {
        taskId: ID,
        inputResponses: {
          login: { action: 'accept' },
          draft: { role: 'assistant', content: { type: 'text', text: '…' }, model: '…' },
          dirs: { roots: [] },
          other: {},
        },
      },
    });
    expect(out.structuredContent.inputRequests).toEqual(inputRequests);
  });
  it('hands over the result of a completed task after the lead text', () => {
    const result = {
      content: [
        { type: 'text', text: '42 results' },
        { type: 'text', text: 'page 1 of 3' },
      ],
      structuredContent: { total: 42 },
    };
    const out = describe_(snapshot({ status: 'completed', result: { ...result, resultType: 'complete' } }));
    const lead = out.structuredContent.instructions;
    expect(lead).toContain(`Task ${ID} completed`);
    expect(out.content).toEqual([{ type: 'text', text: lead }, ...result.content]);
    // The tool's own result, without the wire-level resultType of the stored one.
    expect(out.structuredContent.result).toEqual(result);
    expect(out.structuredContent).not.toHaveProperty('next');
    expect(out).not.toHaveProperty('isError');
    expect(out._meta).toEqual({ [META_BACKGROUND_TASK]: { taskId: ID, status: 'completed' } });
  });
  it('mirrors isError from a completed result', () => {
    const result = { content: [{ type: 'text', text: 'quota exceeded' }], isError: true };
    const out = describe_(snapshot({ status: 'completed', result }));
    const lead = out.structuredContent.instructions;
    expect(lead).toContain(`Task ${ID} ended with an error`);
    expect(out.isError).toBe(true);
    expect(out.content).toEqual([{ type: 'text', text: lead }, ...result.content]);
    expect(out.structuredContent.result).toEqual(result);
  });
  it("drops the server's own _meta from the result and keeps the tool's", () => {
    const server = { [META_SERVER_INFO]: { name: 'durable-mcp', version: '1' } };
    const kept = describe_(
      snapshot({
        status: 'completed',
        result: { content: [], isError: true, _meta: { ...server, [META_ERROR_REF]: 'ref-1' } },
      }),
    );
    expect(kept.structuredContent.result).toEqual({
      content: [],
      isError: true,
      _meta: { [META_ERROR_REF]: 'ref-1' },
    });
    const dropped = describe_(snapshot({ status: 'completed', result: { content: [], _meta: server } }));
    expect(dropped.structuredContent.result).toEqual({ content: [] });
  });
  it('reports a completed task without a stored result as an empty success', () => {
    const out = describe_(snapshot({ status: 'completed', result: undefined }));
    expect(out.content).toHaveLength(1);
    expect(out.structuredContent.result).toEqual({});
    expect(out).not.toHaveProperty('isError');
  });
  it('reports a failed task as an error and keeps its error', () => {
    const error = { code: -32603, message: 'disk full', data: { free: 0 } };
    const out = describe_(snapshot({ status: 'failed', error }));
    expect(out.isError).toBe(true);
    expect(out.structuredContent.instructions).toContain(`Task ${ID} failed: disk full.`);
    expect(out.structuredContent.error).toEqual(error);
    expect(out.structuredContent).not.toHaveProperty('next');
    expect(out.content).toHaveLength(1);

    const bare = describe_(snapshot({ status: 'failed', error: undefined }));
    expect(bare.isError).toBe(true);
    expect(bare.structuredContent.instructions).toContain('unknown error');
    expect(bare.structuredContent).not.toHaveProperty('error');
  });
  it('reports a cancelled task with nothing to do next', () => {
    const out = describe_(snapshot({ status: 'cancelled', statusMessage: 'Cancelled by user' }));
    expect(out.structuredContent.instructions).toContain(`Task ${ID} was cancelled`);
    expect(out.structuredContent).toEqual({
      taskId: ID,
      status: 'cancelled',
      statusMessage: 'Cancelled by user',
      instructions: out.structuredContent.instructions,
    });
    expect(out).not.toHaveProperty('isError');
    expect(out._meta).toEqual({ [META_BACKGROUND_TASK]: { taskId: ID, status: 'cancelled' } });
  });
  it('hands back structuredContent that HANDLE_SCHEMA admits', () => {
    const tasks = [
      snapshot({ status: 'working' }),
      snapshot({ status: 'working', statusMessage: 'Step 2' }),
      snapshot({
        status: 'input_required',
        inputRequests: {
          a: elicitForm({ type: 'object', properties: { ok: { type: 'boolean' } } }),
          b: { method: 'roots/list' },
        },
      }),
      snapshot({ status: 'cancelled' }),
      snapshot({ status: 'completed', result: { content: [] } }),
      snapshot({ status: 'failed', error: { code: -32603, message: 'x' } }),
    ];
    for (const task of tasks) {
      expect(handle(describe_(task).structuredContent)).toEqual({ ok: true });
    }
    expect(handle({ taskId: ID, status: 'working' }).ok).toBe(false);
  });
});
