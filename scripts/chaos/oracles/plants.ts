// Violations planted in the synthetic histories: [the invariant meant to catch it, what it is, how it is planted].
import type { LogLine } from '../harness/log-tail.js';
import { D, T, type History } from './histories.js';

export type Plant = [invariant: string, what: string, plant: (h: History) => void];

const insertLine = (
  h: History,
  at: number,
  fields: [string, string, string, string, number, number?],
): void => {
  const [event, task, run, detail, pid, n] = fields;
  h.lines.splice(at, 0, { seq: 0, event, task, run, detail, pid, t: 0, n });
  h.lines.forEach((l, seq) => (l.seq = seq));
};

const lineOf = (h: History, event: string, run: string, detail: string): LogLine =>
  h.lines.find((l) => l.event === event && l.run === run && l.detail === detail) as LogLine;
const setWake = (h: History, wakeAt: number): void => {
  (h.store.steps[1] as { value: string }).value = JSON.stringify({ wakeAt });
};
const firstTask = (h: History): History['store']['tasks'][number] =>
  h.store.tasks[0] as History['store']['tasks'][number];

/** Violations planted in the clean history. */
export const PLANTED: Plant[] = [
  [
    'memo',
    'a committed step runs again in a later run',
    (h) => insertLine(h, 7, ['step-start', T, 'r2', 's0', 11, 2]),
  ],
  [
    'single-holder',
    'a run starts after the run whose result was stored',
    (h) => insertLine(h, 10, ['run-start', T, 'r3', '-', 12]),
  ],
  [
    'single-holder',
    "a stale run's step value replaces the one the result saw",
    (h) => {
      (h.store.steps[1] as { value: string }).value = JSON.stringify({
        run: 'r1',
        i: 1,
        prev: 'r1',
        attempt: 1,
      });
      insertLine(h, 4, ['step-end', T, 'r1', 's1', 10, 1]);
    },
  ],
  [
    'single-holder',
    'a run commits a step after a newer run claimed the task',
    (h) => {
      // r2 starts while r1's step body is still running; r1 then commits s0 anyway.
      const r2start = h.lines.splice(5, 1)[0] as LogLine;
      h.lines.splice(2, 0, r2start);
      h.lines.forEach((l, seq) => (l.seq = seq));
    },
  ],
  [
    'answers',
    'an acknowledged answer is not the one the task used',
    (h) => (h.rec.answers.k0 = 'c1:k0:other'),
  ],
  ['terminal', 'a task never ends', (h) => (firstTask(h).status = 'working')],
  [
    'terminal',
    'the client saw another terminal state than the store holds',
    (h) => (h.rec.final = { status: 'failed' }),
  ],
  [
    'handles',
    'one tools/call created two tasks',
    (h) => h.store.tasks.push({ ...firstTask(h), id: `${T.slice(0, -1)}B`, status: 'completed' }),
  ],
];

/** Violations planted in the durable history. */
export const PLANTED_DURABLE: Plant[] = [
  ['attempts', 'a retry skips an attempt number', (h) => (lineOf(h, 'step-start', 'r3', 's1').n = 3)],
  [
    'attempts',
    'an attempt whose failure was stored runs again under its number',
    (h) => (lineOf(h, 'step-start', 'r3', 's1').n = 1),
  ],
  [
    'attempts',
    'the store counts another number of failed attempts than were planned',
    (h) => ((h.store.attempts?.[0] as { failed: number }).failed = 2),
  ],
  ['waits', 'a sleep ends before its wake time', (h) => setWake(h, 1400)],
  ['waits', 'a replay pushes back the wake time the first waiting run fixed', (h) => setWake(h, 1305)],
  ['waits', 'a retry starts before its backoff', (h) => (lineOf(h, 'step-start', 'r3', 's1').t = 1320)],
  [
    'idempotent',
    'a retried call under one key made a second task',
    (h) => h.store.tasks.push({ ...firstTask(h), id: `${D.slice(0, -1)}E`, idempotency_key: null }),
  ],
  [
    'idempotent',
    'a client was answered with two tasks for one key',
    (h) => h.rec.seenIds?.add(`${D.slice(0, -1)}E`),
  ],
];
