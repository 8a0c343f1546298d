// A synthetic chaos_parallel task for the oracles' self-check: consistent (a run killed after keeping `before` and
// one map item, then a run that replays them and runs the rest), and violations planted into it, each of which the
// parallel checker must report under the invariant meant to catch it.
import type { LogLine } from '../harness/log-tail.js';
import type { Stored } from '../parallel/check.js';

export interface ParallelHistory {
  items: number;
  task: Stored['tasks'][number];
  steps: Stored['steps'];
  lines: LogLine[];
}

const TASK = 'task-p';
const T = 1_700_000_000_000;

/** Run `a` keeps before and part[1], part[0] is cut short by a kill; run `b` replays them and runs the rest. */
export function cleanParallelHistory(): ParallelHistory {
  let seq = 0;
  const line = (event: string, run: string, detail: string, t: number, n?: number): LogLine => ({
    seq: seq++,
    event,
    task: TASK,
    run,
    detail,
    pid: run === 'a' ? 1 : 2,
    t: T + t,
    n,
  });
  const kept: Record<string, { run: string; nonce: string; at: number }> = {
    before: { run: 'a', nonce: 'n-before', at: 10 },
    'part[1]': { run: 'a', nonce: 'n-part1', at: 30 },
    'part[0]': { run: 'b', nonce: 'n-part0', at: 120 },
    side: { run: 'b', nonce: 'n-side', at: 125 },
    after: { run: 'b', nonce: 'n-after', at: 140 },
  };
  const lines = [
    line('run-start', 'a', '-', 0),
    line('step-start', 'a', 'before', 1, 1),
    line('effect', 'a', 'before=n-before', 9, 1),
    line('step-start', 'a', 'part[0]', 11, 1),
    line('step-start', 'a', 'part[1]', 11, 1),
    line('step-start', 'a', 'side', 11, 1),
    line('effect', 'a', 'part[1]=n-part1', 29, 1),
    line('killed', '-', '-', 40),
    line('run-start', 'b', '-', 100),
    line('step-start', 'b', 'part[0]', 101, 1),
    line('step-start', 'b', 'side', 101, 1),
    line('effect', 'b', 'part[0]=n-part0', 119, 1),
    line('effect', 'b', 'side=n-side', 124, 1),
    line('step-start', 'b', 'after', 126, 1),
    line('effect', 'b', 'after=n-after', 139, 1),
  ];
  const value = (name: string) => ({ run: kept[name]?.run, nonce: kept[name]?.nonce });
  const summary = {
    taskId: TASK,
    run: 'b',
    before: value('before'),
    parts: [value('part[0]'), value('part[1]')],
    side: value('side'),
    after: value('after'),
  };
  return {
    items: 2,
    task: {
      id: TASK,
      status: 'completed',
      result: JSON.stringify({ content: [{ type: 'text', text: JSON.stringify(summary) }] }),
    },
    steps: Object.entries(kept).map(([name, k]) => ({
      task_id: TASK,
      name,
      value: JSON.stringify({ run: k.run, nonce: k.nonce }),
      saved_at: T + k.at,
    })),
    lines,
  };
}

type Plant = readonly [invariant: string, what: string, plant: (h: ParallelHistory) => void];

const result = (h: ParallelHistory): Record<string, unknown> =>
  JSON.parse(
    (JSON.parse(h.task.result ?? '{}') as { content: { text: string }[] }).content[0]?.text ?? '{}',
  ) as Record<string, unknown>;

const setResult = (h: ParallelHistory, summary: Record<string, unknown>): void => {
  h.task.result = JSON.stringify({ content: [{ type: 'text', text: JSON.stringify(summary) }] });
};

export const PLANTED_PARALLEL: readonly Plant[] = [
  [
    'memo',
    'a parallel step committed by a killed run runs again in the run that took over',
    (h) => h.lines.push({ ...(h.lines[4] as LogLine), run: 'b', t: T + 102, seq: 99 }),
  ],
  [
    'kept-effect',
    "a kept value's effect happened twice",
    (h) => h.lines.push({ ...(h.lines[12] as LogLine), seq: 99 }),
  ],
  [
    'kept-effect',
    'a kept value names a run that did not log its effect',
    (h) => {
      const side = h.steps.find((s) => s.name === 'side');
      if (side !== undefined) side.value = JSON.stringify({ run: 'a', nonce: 'n-side' });
    },
  ],
  [
    'result',
    "the result lists the map's items out of item order",
    (h) => {
      const summary = result(h);
      setResult(h, { ...summary, parts: [...(summary.parts as unknown[])].reverse() });
    },
  ],
  [
    'result',
    'a step the task ran is missing from the store',
    (h) => {
      h.steps = h.steps.filter((s) => s.name !== 'after');
    },
  ],
  [
    'terminal',
    'the task ended failed (a replay that left its history)',
    (h) => {
      h.task.status = 'failed';
    },
  ],
];
