import { describe, expect, it } from 'vitest';
import type { AdminPayload } from '../tasks/admin.js';
import type { InspectedStep, TaskInspection } from '../tasks/inspection.js';
import { stepNames } from './delivery.js';
import { createDispatchView, parseStepName } from './dispatch-state.js';

const step = (name: string, done = true): InspectedStep => ({
  name,
  done,
  failedAttempts: done ? 0 : 1,
  lastFailure: undefined,
});

const task = (tool: string, steps: InspectedStep[]): TaskInspection =>
  ({ id: 't1', tool, steps }) as unknown as TaskInspection;

/** A step reader over fixed values, recording what it was asked. */
function reader(values: Record<string, AdminPayload>) {
  const asked: string[] = [];
  const read = async (name: string) => {
    asked.push(name);
    return values[name];
  };
  return { asked, read };
}

const view = createDispatchView('http://up.example/mcp', (tool) => tool !== 'own_tool');

describe('parseStepName', () => {
  it('inverts the names delivery.ts gives each round of each exchange, and nothing else', () => {
    for (const exchange of [1, 2, 17])
      for (const round of [1, 2, 16]) {
        const names = stepNames(exchange, round);
        expect(parseStepName(names.marker)).toEqual({ part: 'marker', exchange, round });
        expect(parseStepName(names.answer)).toEqual({ part: 'answer', exchange, round });
      }
    for (const other of [
      'dispatched-1',
      'upstream@1',
      'upstream-01',
      'fetch',
      'dispatchedx',
      'upstream@',
      '',
    ])
      expect(parseStepName(other), other).toBeUndefined();
  });
});

describe('the dispatch state of a gateway task', () => {
  it('is not dispatched without a marker (an upstream tool), and absent for the gateway’s own tools', async () => {
    const { read, asked } = reader({});
    expect(await view(task('send_payment', []), read)).toEqual({
      upstream: 'http://up.example/mcp',
      dispatch: 'not_dispatched',
    });
    // A marker whose step failed (the upstream could not be reached) was not written: nothing was sent.
    expect(await view(task('send_payment', [step('dispatched', false)]), read)).toMatchObject({
      dispatch: 'not_dispatched',
    });
    expect(await view(task('own_tool', [step('fetch')]), read)).toBeUndefined();
    expect(asked).toEqual([]);
  });

  it('is dispatched when the latest round’s marker has no answer kept (whatever was answered before)', async () => {
    const { read, asked } = reader({});
    expect(await view(task('send_payment', [step('dispatched')]), read)).toEqual({
      upstream: 'http://up.example/mcp',
      dispatch: 'dispatched',
      step: 'dispatched',
      recordStep: 'upstream',
    });
    const secondRound = [
      step('dispatched'),
      step('upstream'),
      step('dispatched-2'),
      step('upstream-2', false),
    ];
    expect(await view(task('send_payment', secondRound), read)).toMatchObject({
      dispatch: 'dispatched',
      step: 'dispatched-2',
      recordStep: 'upstream-2',
    });
    expect(asked).toEqual([]);
  });

  it('is answered, or following the upstream’s task, by the latest exchange’s answer', async () => {
    const { read, asked } = reader({
      upstream: { content: [{ type: 'text', text: '5' }] },
      'upstream@2': { resultType: 'task', taskId: 'up-42', status: 'working' },
    });
    expect(await view(task('send_payment', [step('dispatched'), step('upstream')]), read)).toEqual({
      upstream: 'http://up.example/mcp',
      dispatch: 'answered',
      step: 'upstream',
    });
    // An operator's retry copied exchange 1 and sent the call anew as exchange 2, which became an upstream task.
    const retried = [step('dispatched'), step('upstream'), step('dispatched@2'), step('upstream@2')];
    expect(await view(task('send_payment', retried), read)).toEqual({
      upstream: 'http://up.example/mcp',
      dispatch: 'following',
      step: 'upstream@2',
      upstreamTaskId: 'up-42',
    });
    expect(asked).toEqual(['upstream', 'upstream@2']);
  });

  it('shows no upstream task id that is not a short string, nor one of a sealed value', async () => {
    for (const value of [
      { resultType: 'task', taskId: 7 },
      { resultType: 'task', taskId: 'x'.repeat(257) },
      { resultType: 'task', taskId: '' },
      { sealed: true },
      null,
    ] as AdminPayload[]) {
      const { read } = reader({ upstream: value });
      expect(await view(task('send_payment', [step('dispatched'), step('upstream')]), read)).toEqual({
        upstream: 'http://up.example/mcp',
        dispatch: 'answered',
        step: 'upstream',
      });
    }
  });
});
