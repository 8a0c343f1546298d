// A gateway task's upstream call in its detail (where the call stands: not dispatched, dispatched with no answer
// kept, answered, following an upstream task), and for a call whose outcome is unknown the three things an operator
// can do: retry it, record the outcome they verified (the upstream's result, pasted as JSON), or leave it failed.
import { call, describeError } from './api.js';
import { confirmAction, h, notify, type Child } from './dom.js';
import { isOutcomeUnknown, type TaskDetail } from './types.js';

const STATES: Record<string, string> = {
  not_dispatched: 'not dispatched: nothing was sent upstream',
  dispatched: 'dispatched: sent, no answer kept (the upstream may have done it)',
  answered: 'answered: the upstream’s answer is kept',
  following: 'following the upstream’s own task',
};

/** The largest result recorded (the server refuses a retry body over 4 MiB). */
const MAX_RECORD_BYTES = 4 * 1024 * 1024;

export function upstreamSection(t: TaskDetail): Child {
  const up = t.upstream;
  if (up === undefined) return null;
  const rows: [string, Child][] = [
    ['Upstream', h('span', { class: 'mono' }, up.upstream)],
    ['Dispatch', h('span', { 'data-dispatch': up.dispatch }, STATES[up.dispatch] ?? up.dispatch)],
  ];
  if (up.upstreamTaskId !== undefined)
    rows.push(['Upstream task', h('span', { class: 'mono' }, up.upstreamTaskId)]);
  if (up.step !== undefined) rows.push(['From step', h('span', { class: 'mono' }, up.step)]);
  return h(
    'section',
    { 'aria-labelledby': 'upstream-title', id: 'upstream' },
    h('h2', { id: 'upstream-title' }, 'Upstream call'),
    h('dl', { class: 'facts' }, ...rows.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)])),
  );
}

/** The step a recorded outcome goes under: the answer of the round that was sent (none once an answer is kept). */
const recordStepOf = (t: TaskDetail): string | undefined => t.upstream?.recordStep;

/** What the operator can do when the task did it, by what is known of its call. */
function didIt(t: TaskDetail, step: string | undefined): string {
  if (step !== undefined)
    return 'record its result below; a new task completes with it without calling the upstream.';
  if (t.upstream === undefined)
    return 'record its result under the step that would have kept it: durable-mcp admin tasks retry ID --record-step STEP --value @result.json.';
  return 'the upstream’s answer is kept already (see Upstream call): there is nothing to record; retry sends the call anew.';
}

export function outcomeUnknownSection(t: TaskDetail, path: string): Child {
  if (!isOutcomeUnknown(t)) return null;
  const step = recordStepOf(t);
  return h(
    'section',
    { class: 'card outcome-unknown', 'aria-labelledby': 'unknown-title', id: 'outcome-unknown' },
    h('h2', { id: 'unknown-title' }, 'Outcome unknown'),
    h(
      'p',
      {},
      'The gateway sent this call upstream and stopped before it kept the answer: the upstream may or may not ' +
        'have done it. Check with the upstream (or whoever runs it), then choose:',
    ),
    h(
      'ul',
      {},
      h(
        'li',
        {},
        h('strong', {}, 'It did not do it: '),
        'Retry (above) makes a new task that sends the call again.',
      ),
      h('li', {}, h('strong', {}, 'It did it: '), didIt(t, step)),
      h(
        'li',
        { id: 'leave-failed' },
        h('strong', {}, 'Leave it failed: '),
        'nothing to do. There is no “acknowledged” state: this task stays failed, and stays listed under ' +
          '“outcome unknown” until it is purged.',
      ),
    ),
    step !== undefined && recordForm(t, path, step),
  );
}

/** The text as a JSON object, or why it is not one. */
export function parseRecord(text: string): { ok: true; value: object } | { ok: false; reason: string } {
  if (new TextEncoder().encode(text).length > MAX_RECORD_BYTES)
    return { ok: false, reason: 'The result is larger than 4 MiB.' };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { ok: false, reason: `Not JSON: ${err instanceof Error ? err.message : String(err)}` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return {
      ok: false,
      reason: 'The result must be a JSON object, e.g. {"content":[{"type":"text","text":"…"}]}.',
    };
  return { ok: true, value };
}

function recordForm(t: TaskDetail, path: string, step: string): HTMLFormElement {
  const field = h('textarea', {
    id: 'record-value',
    name: 'value',
    rows: '8',
    spellcheck: 'false',
    required: true,
    'aria-describedby': 'record-help record-error',
    placeholder: '{"content":[{"type":"text","text":"…"}]}',
  });
  const error = h('p', { id: 'record-error', class: 'error', role: 'alert' });
  const form = h(
    'form',
    { id: 'record-outcome', class: 'record' },
    h('label', { for: 'record-value' }, 'The upstream’s result, as it would have answered (a JSON object)'),
    h(
      'p',
      { id: 'record-help', class: 'muted' },
      'Kept as the value of step ',
      h('span', { class: 'mono' }, step),
      ' of a new task linked to this one; this task stays as it ended.',
    ),
    field,
    error,
    h('button', { type: 'submit' }, 'Record outcome'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void record(t, path, step, field.value, error);
  });
  return form;
}

async function record(
  t: TaskDetail,
  path: string,
  step: string,
  text: string,
  error: HTMLElement,
): Promise<void> {
  const parsed = parseRecord(text.trim());
  error.textContent = parsed.ok ? '' : parsed.reason;
  if (!parsed.ok) return;
  const sure = await confirmAction(
    `Record the outcome of task ${t.id}?`,
    'A new task, linked to this one, takes this result as the upstream’s answer and completes with it, without ' +
      'calling the upstream. Do this only once you have checked that the upstream did the call.',
    'Record outcome',
  );
  if (!sure) return;
  try {
    const answer = await call<{ taskId?: unknown }>('POST', `${path}/retry`, {
      record: { step, value: parsed.value },
    });
    if (typeof answer.taskId !== 'string') throw new Error('the server answered no new task');
    notify(`Outcome recorded. New task: ${answer.taskId}.`);
    location.hash = `#/tasks/${encodeURIComponent(answer.taskId)}`;
  } catch (err) {
    error.textContent = `Record refused: ${describeError(err)}`;
  }
}
