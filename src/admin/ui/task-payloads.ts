// A task's payloads in its detail (only from a server started with --admin-payloads): each one collapsed, its JSON
// shown as text.
import { h, type Child } from './dom.js';
import type { TaskDetail } from './types.js';

/** One payload, collapsed: `{"sealed": true}` when the server could not open it. */
const payload = (label: string, value: unknown): HTMLElement =>
  h(
    'details',
    { class: 'payload' },
    h('summary', {}, label),
    h('pre', {}, JSON.stringify(value, null, 2) ?? 'undefined'),
  );

export function payloads(t: TaskDetail): Child {
  if (t.arguments === undefined) return null;
  const inputs = (t.inputs ?? []).flatMap((input) => [
    input.request !== undefined && payload(`Input ${input.key}: request`, input.request),
    input.answer !== undefined && payload(`Input ${input.key}: answer`, input.answer),
  ]);
  return h(
    'section',
    { 'aria-labelledby': 'payloads-title' },
    h('h2', { id: 'payloads-title' }, 'Payloads'),
    payload('Arguments', t.arguments),
    ...inputs,
    t.result !== undefined && payload('Result', t.result),
  );
}
