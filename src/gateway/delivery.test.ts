import { describe, expect, it } from 'vitest';
import type { HandlerContext } from '../protocol/tool-types.js';
import type { JsonValue } from '../protocol/types.js';
import { errorParts, StepFailedError } from '../tasks/execution.js';
import { ProtocolError } from '../wire/protocol-error.js';
import { callUpstream, deliveryOf } from './delivery.js';
import {
  UpstreamLostError,
  UpstreamNotSentError,
  UpstreamRefusedError,
  type Upstream,
  type UpstreamTool,
} from './upstream.js';

const TASK = 'task_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';

/** An upstream whose every call fails with `thrown`. */
const failing = (thrown: Error): Upstream => ({
  name: 'test',
  ready: async () => undefined,
  listTools: async () => [],
  callTool: async () => {
    throw thrown;
  },
  onToolsChanged: () => undefined,
  close: async () => undefined,
});

/**
 * The runs of one task as the runtime gives them to the handler: kept step values are returned; a step whose body
 * failed for good is, in a later run, replayed from what the store keeps of the failure (its name, message, stack).
 */
function task(kept: Record<string, JsonValue> = {}) {
  const failed: Record<string, ReturnType<typeof errorParts>> = {};
  const ctx = {
    taskId: TASK,
    envelope: { clientCapabilities: {} },
    auth: { tenant: 't', principal: 'p' },
    signal: new AbortController().signal,
    progress: () => undefined,
    step: async (name: string, fn: () => Promise<JsonValue> | JsonValue) => {
      if (Object.hasOwn(kept, name)) return kept[name];
      const prior = failed[name];
      if (prior !== undefined) throw new StepFailedError(prior.name, prior.message, prior.stack);
      try {
        kept[name] = await fn();
        return kept[name];
      } catch (err) {
        failed[name] = errorParts(err);
        throw err;
      }
    },
  } as unknown as HandlerContext;
  return ctx;
}

const tool = (idempotent: boolean): UpstreamTool =>
  ({
    name: 'pay',
    inputSchema: { type: 'object' },
    annotations: { idempotentHint: idempotent },
  }) as UpstreamTool;

/** The caller's error of a run of the call. */
async function callError(
  upstream: Upstream,
  ctx: HandlerContext,
  idempotent: boolean,
): Promise<ProtocolError> {
  const err = await callUpstream(upstream, 'pay', {}, ctx, deliveryOf(tool(idempotent), {}), {}).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProtocolError);
  return err as ProtocolError;
}

const shape = (e: ProtocolError) => ({ code: e.code, message: e.message, data: e.data });

describe('the call step of an upstream call, live and replayed after a crash', () => {
  it('ends a call an earlier run dispatched "outcome unknown", and a replay of that failure the same', async () => {
    const ctx = task({ dispatched: { run: 'an-earlier-run', task: TASK } });
    const upstream = failing(new Error('never sent'));
    const live = await callError(upstream, ctx, false);
    expect(live.data).toMatchObject({ outcome: 'unknown', tool: 'pay' });
    expect(shape(await callError(upstream, ctx, false))).toEqual(shape(live));
  });

  it('ends a lost call "outcome unknown" (not idempotent) or failed (idempotent), and its replay the same', async () => {
    for (const idempotent of [false, true]) {
      const ctx = task();
      const upstream = failing(new UpstreamLostError('the upstream session closed during the call'));
      const live = await callError(upstream, ctx, idempotent);
      expect(live.data).toMatchObject({ outcome: idempotent ? 'failed' : 'unknown' });
      expect(shape(await callError(upstream, ctx, idempotent))).toEqual(shape(live));
    }
  });

  it('ends a call not sent "not_sent", and its replay the same', async () => {
    const ctx = task();
    const upstream = failing(new UpstreamNotSentError('cannot reach the upstream'));
    const live = await callError(upstream, ctx, false);
    expect(live.data).toMatchObject({ outcome: 'not_sent' });
    expect(shape(await callError(upstream, ctx, false))).toEqual(shape(live));
  });

  it("passes the upstream's refusal on with its code and message, live and replayed", async () => {
    const ctx = task();
    const upstream = failing(
      new UpstreamRefusedError(-32602, 'cents must be an integer', { field: 'cents' }),
    );
    const live = await callError(upstream, ctx, false);
    expect(shape(live)).toEqual({
      code: -32602,
      message: 'cents must be an integer',
      data: { field: 'cents' },
    });
    const replayed = await callError(upstream, ctx, false);
    expect({ code: replayed.code, message: replayed.message }).toEqual({
      code: -32602,
      message: 'cents must be an integer',
    });
  });
});
