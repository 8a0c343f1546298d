// The fallback's hand-backs: how a task is described to a model that follows it with the facade tools.
import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../../wire/jsonrpc.js';
import { META_BACKGROUND_TASK, META_ERROR_REF, META_SERVER_INFO } from '../../wire/meta-keys.js';
import { checkAnswer } from '../input-answers.js';
import { compileSchema } from '../schema-validation.js';
import { HANDLE_SCHEMA, describeTask, resolveFallback } from './fallback.js';
import { described, elicitForm, ID, snapshot, type Described } from '../../../test/support/hand-back.js';

describe('describeTask', () => {
  const handle = compileSchema(HANDLE_SCHEMA, 'structuredContent');

  it('points a working task to the status tool', () => {
    const out = described(snapshot({ status: 'working', statusMessage: 'Indexing 3 of 9' }));
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
    expect(described(snapshot({ status: 'working' }), 500).structuredContent.instructions).toContain(
      '(it waits up to 500 ms for news)',
    );
    expect(described(snapshot({ status: 'working' }), 0).structuredContent.instructions).not.toContain(
      'waits up to',
    );
  });
  it('describes the fields of a form elicitation, with a placeholder where each answer goes', () => {
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
    const out = described(task);
    const text = out.structuredContent.instructions;
    expect(text).toContain(`Task ${ID} is waiting`);
    const fields = [
      'confirm (boolean, required): Confirm the order',
      'size (string, one of "S", "M", "L", required)',
      'count (integer, optional, suggested default 3, only if the user picks it)',
      'ratio (number, optional)',
      'note (string, optional): Anything else',
      'tags (array, optional)',
    ];
    expect(text).toContain(`- "order": Pick the order options. Fields: ${fields.join('; ')}.`);
    const names = ['confirm', 'size', 'count', 'ratio', 'note', 'tags'];
    const content = Object.fromEntries(
      names.map((n, i) => [n, { placeholder: `the user's answer: ${fields[i] as string}` }]),
    );
    const args = {
      taskId: ID,
      inputResponses: {
        order: { action: { placeholder: 'the user\'s choice: "accept", "decline" or "cancel"' }, content },
      },
    };
    expect(out.structuredContent.next).toEqual({ tool: 'task_respond', arguments: args });
    expect(text).toContain('Ask the user; do not answer for them.');
    expect(text).toContain(`call task_respond with ${JSON.stringify(args)}`);
    expect(text).toContain('{"action":"decline"}');
    expect(text).toContain(`call task_cancel with {"taskId":"${ID}"}`);
    expect(out.structuredContent.inputRequests).toEqual({ order: request });
    expect(out._meta).toEqual({ [META_BACKGROUND_TASK]: { taskId: ID, status: 'input_required' } });
    expect(out).not.toHaveProperty('isError');
    // Sent as it is, the next call answers nothing.
    expect(checkAnswer(request, args.inputResponses.order)).toMatchObject({ ok: false, placeholder: true });
  });
  it('describes defaults, listed choices and bounds as information, never as the answer', () => {
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
          name: { type: 'string', maxLength: 20, format: 'email' },
        },
      },
      '',
    );
    const out = described(snapshot({ status: 'input_required', inputRequests: { q: request } }));
    const next = out.structuredContent.next as { arguments: { inputResponses: Record<string, JsonObject> } };
    const answer = next.arguments.inputResponses.q as { content: Record<string, unknown> };
    for (const value of Object.values(answer.content)) expect(value).toHaveProperty('placeholder');
    expect(JSON.stringify(answer)).not.toContain('"high"');
    const text = out.structuredContent.instructions;
    expect(text).toContain(
      '- "q": Fields: level (string, one of "low", "high", optional, suggested default "high", only if the ' +
        'user picks it); colour (string, one of "r", "g", optional)',
    );
    expect(text).toContain('picks (array, any of "a", "b", at least 1 choices, optional)');
    expect(text).toContain('amount (number, at least 5, optional)');
    expect(text).toContain('name (string, email, at most 20 characters, optional)');
  });

  it('gives each kind of input request a shape whose placeholders do not validate', () => {
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
    const out = described(snapshot({ status: 'input_required', inputRequests }));
    const text = out.structuredContent.instructions;
    expect(text).toContain(
      '- "login": Sign in to the store. The user must open https://example.com/login and finish there.',
    );
    expect(text).toContain('- "draft": A language model completion is requested, if the user allows it: ');
    expect(text).toContain('"Summarise"');
    expect(text).toContain('- "dirs": The task asks for the root directories');
    expect(text).toContain('- "other": A custom/ask request: {"q":1}.');
    const next = out.structuredContent.next as { arguments: { inputResponses: Record<string, JsonObject> } };
    const shapes = next.arguments.inputResponses;
    expect(Object.keys(shapes)).toEqual(['login', 'draft', 'dirs', 'other']);
    for (const key of ['login', 'draft', 'dirs']) {
      expect(checkAnswer(inputRequests[key], shapes[key])).toMatchObject({ ok: false, placeholder: true });
    }
    expect(shapes.draft).toMatchObject({ role: 'assistant', content: { type: 'text' } });
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
    const out = described(snapshot({ status: 'completed', result: { ...result, resultType: 'complete' } }));
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
    const out = described(snapshot({ status: 'completed', result }));
    const lead = out.structuredContent.instructions;
    expect(lead).toContain(`Task ${ID} ended with an error`);
    expect(out.isError).toBe(true);
    expect(out.content).toEqual([{ type: 'text', text: lead }, ...result.content]);
    expect(out.structuredContent.result).toEqual(result);
  });
  it("drops the server's own _meta from the result and keeps the tool's", () => {
    const server = { [META_SERVER_INFO]: { name: 'durable-mcp', version: '1' } };
    const kept = described(
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
    const dropped = described(snapshot({ status: 'completed', result: { content: [], _meta: server } }));
    expect(dropped.structuredContent.result).toEqual({ content: [] });
  });
  it('reports a completed task without a stored result as an empty success', () => {
    const out = described(snapshot({ status: 'completed', result: undefined }));
    expect(out.content).toHaveLength(1);
    expect(out.structuredContent.result).toEqual({});
    expect(out).not.toHaveProperty('isError');
  });
  it('reports a failed task as an error and keeps its error', () => {
    const error = { code: -32603, message: 'disk full', data: { free: 0 } };
    const out = described(snapshot({ status: 'failed', error }));
    expect(out.isError).toBe(true);
    expect(out.structuredContent.instructions).toContain(`Task ${ID} failed: disk full.`);
    expect(out.structuredContent.error).toEqual(error);
    expect(out.structuredContent).not.toHaveProperty('next');
    expect(out.content).toHaveLength(1);

    const bare = described(snapshot({ status: 'failed', error: undefined }));
    expect(bare.isError).toBe(true);
    expect(bare.structuredContent.instructions).toContain('unknown error');
    expect(bare.structuredContent).not.toHaveProperty('error');
  });
  it('reports a cancelled task with nothing to do next', () => {
    const out = described(snapshot({ status: 'cancelled', statusMessage: 'Cancelled by user' }));
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
      expect(handle(described(task).structuredContent)).toEqual({ ok: true });
    }
    expect(handle({ taskId: ID, status: 'working' }).ok).toBe(false);
  });
});
