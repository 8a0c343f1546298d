// A task's detail: status and outcome, owner, tool@version, lease and times, the retries it came from or led to, the
// steps with their attempts and last failure, the payloads when the server shows them, and the actions (cancel,
// retry, purge), each confirmed first. Read again whenever the task changes.
import { call, describeError } from './api.js';
import { confirmAction, h, notify, outcomeBadge, show, statusBadge, time, type Child } from './dom.js';
import { onLive } from './live.js';
import { toolName } from './overview.js';
import { payloads } from './task-payloads.js';
import { outcomeUnknownSection, upstreamSection } from './task-upstream.js';
import { isRetryable, isTerminal, type TaskDetail } from './types.js';

interface Action {
  label: string;
  method: 'POST' | 'DELETE';
  path: string;
  explain: string;
  done: string;
  allowed: (task: TaskDetail) => boolean;
}

const ACTIONS: readonly Action[] = [
  {
    label: 'Cancel',
    method: 'POST',
    path: '/cancel',
    explain: 'The task is asked to stop; its run ends at its next check and it turns cancelled.',
    done: 'Cancellation requested.',
    allowed: (t) => !isTerminal(t.status),
  },
  {
    label: 'Retry',
    method: 'POST',
    path: '/retry',
    explain:
      'A new task runs again from its last finished step: it copies the steps with a result, which are not run ' +
      'again. This task stays as it ended.',
    done: 'Retry requested: a new task runs again from the last finished step.',
    allowed: isRetryable,
  },
  {
    label: 'Purge',
    method: 'DELETE',
    path: '',
    explain: 'The task and everything kept about it are deleted. This cannot be undone.',
    done: 'Task purged.',
    allowed: (t) => isTerminal(t.status),
  },
];

export function taskDetailView(id: string): () => void {
  const path = `/tasks/${encodeURIComponent(id)}`;
  let stopped = false;
  const load = (): void => {
    call<TaskDetail>('GET', path).then(
      (task) => {
        if (!stopped) show(render(task, path, load));
      },
      (err: unknown) => {
        if (!stopped)
          show(h('h1', {}, 'Task'), h('p', { class: 'error', role: 'alert' }, describeError(err)));
      },
    );
  };
  load();
  const off = onLive({
    resync: load,
    event(event) {
      if (event.taskId !== id) return;
      if ('removed' in event) show(h('h1', {}, 'Task'), h('p', { role: 'status' }, 'This task was purged.'));
      else load();
    },
  });
  return () => {
    stopped = true;
    off();
  };
}

function render(task: TaskDetail, path: string, reload: () => void): HTMLElement {
  const buttons = ACTIONS.filter((a) => a.allowed(task)).map((action) =>
    h(
      'button',
      {
        type: 'button',
        class: action.method === 'DELETE' ? 'danger' : '',
        onclick: () => void act(task, path, action, reload),
      },
      action.label,
    ),
  );
  return h(
    'article',
    { 'aria-labelledby': 'task-title' },
    h('p', {}, h('a', { href: '#/tasks' }, '← Tasks')),
    h(
      'h1',
      { id: 'task-title' },
      'Task ',
      h('span', { class: 'mono' }, task.id),
      ' ',
      statusBadge(task.status),
      // Only where it says more than the status: a tool error.
      ' ',
      task.outcome !== task.status && outcomeBadge(task.outcome),
    ),
    h('div', { class: 'actions', role: 'group', 'aria-label': 'Actions' }, ...buttons),
    facts(task),
    errors(task),
    outcomeUnknownSection(task, path),
    upstreamSection(task),
    history(task),
    steps(task),
    payloads(task),
  );
}

async function act(task: TaskDetail, path: string, action: Action, reload: () => void): Promise<void> {
  const sure = await confirmAction(`${action.label} task ${task.id}?`, action.explain, action.label);
  if (!sure) return;
  try {
    const answer = await call<{ taskId?: unknown }>(action.method, `${path}${action.path}`);
    if (action.method === 'DELETE') {
      notify(action.done);
      location.hash = '#/tasks';
    } else if (typeof answer.taskId === 'string') {
      // A retry answers the new task: show it (this one has not changed).
      notify(`${action.done} New task: ${answer.taskId}.`);
      location.hash = taskLink(answer.taskId);
    } else {
      notify(action.done);
      reload();
    }
  } catch (err) {
    notify(`${action.label} refused: ${describeError(err)}`, 'error');
  }
}

const taskLink = (id: string): string => `#/tasks/${encodeURIComponent(id)}`;

/** Links to tasks by id (a retry's original, the retries made of a task). */
const links = (ids: readonly string[]): Child =>
  ids.length === 0
    ? '—'
    : h(
        'span',
        {},
        ...ids.flatMap((id, i) => [i === 0 ? '' : ', ', h('a', { href: taskLink(id), class: 'mono' }, id)]),
      );

/** Links to a task's child tasks (ctx.callTool), each with its tool and status. */
const childLinks = (children: NonNullable<TaskDetail['children']>): Child =>
  children.length === 0
    ? '—'
    : h(
        'span',
        {},
        ...children.flatMap((c, i) => [
          i === 0 ? '' : ', ',
          h('a', { href: taskLink(c.id), class: 'mono' }, c.id),
          ` (${c.tool}: ${c.status})`,
        ]),
      );

function facts(t: TaskDetail): HTMLElement {
  const rows: [string, Child][] = [
    ['Status', t.statusMessage === undefined ? t.status : `${t.status} — ${t.statusMessage}`],
    ['Outcome', t.outcome === undefined ? 'not finished' : t.outcome.replace('_', ' ')],
    ['Retry of', links(t.retryOf === undefined ? [] : [t.retryOf])],
    ['Retried as', links(t.retries ?? [])],
    ['Parent task', links(t.parentId === undefined ? [] : [t.parentId])],
    ['Child tasks', childLinks(t.children ?? [])],
    ['Owner', `${t.principal} @ ${t.tenant}`],
    ['Tool', toolName(t.tool, t.toolVersion)],
    ['Runs', t.attempt],
    ['Created', time(t.createdAt)],
    ['Updated', time(t.updatedAt)],
    ['Expires', time(t.expiresAt)],
    [
      'Lease',
      t.leaseOwner === undefined ? 'none' : h('span', {}, `${t.leaseOwner} until `, time(t.leaseUntil)),
    ],
    ['Wakes', time(t.wakeAt)],
    ['Waiting for input', t.pendingInputs === undefined ? '—' : t.pendingInputs.join(', ')],
    ['Cancel requested', t.cancelRequested ? 'yes' : 'no'],
    ['Idempotency key', t.idempotencyKey ?? '—'],
    ['Trace', t.traceId ?? '—'],
  ];
  return h('dl', { class: 'facts' }, ...rows.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
}

function errors(t: TaskDetail): Child {
  if (t.error === undefined && t.failure === undefined) return null;
  return h(
    'section',
    { class: 'card failure', 'aria-labelledby': 'failure-title' },
    h('h2', { id: 'failure-title' }, 'Error'),
    t.error && h('p', {}, `${t.error.code}: ${t.error.message}`),
    t.error?.outcome !== undefined &&
      h(
        'p',
        {},
        'Outcome: ',
        h('span', { class: 'badge', 'data-error-outcome': t.error.outcome }, t.error.outcome),
      ),
    t.failure &&
      h(
        'p',
        {},
        `${t.failure.name ?? 'Error'}: ${t.failure.message}`,
        t.failure.step === undefined ? '' : ` (step ${t.failure.step}, run ${t.failure.attempt ?? '?'}) `,
        time(t.failure.at),
      ),
    t.failure?.stack && h('details', {}, h('summary', {}, 'Stack'), h('pre', {}, t.failure.stack)),
  );
}

function steps(t: TaskDetail): HTMLElement {
  const items = t.steps.map((s) =>
    h(
      'li',
      { class: s.done ? 'done' : 'pending', 'data-step': s.name },
      h('strong', {}, s.name),
      ' ',
      h('span', { class: 'muted' }, s.done ? 'done' : 'not done'),
      s.durationMs !== undefined && h('span', { class: 'muted' }, ` in ${duration(s.durationMs)}`),
      s.startedAt !== undefined && h('span', { class: 'muted' }, ' · started ', time(s.startedAt)),
      s.failedAttempts > 0 &&
        h(
          'span',
          { class: 'attempts' },
          ` · ${s.failedAttempts} failed attempt${s.failedAttempts === 1 ? '' : 's'}`,
        ),
      s.lastFailure &&
        h(
          'div',
          { class: 'error-text' },
          `Last failure (attempt ${s.lastFailure.attempt}): ${s.lastFailure.message} `,
          time(s.lastFailure.at),
        ),
    ),
  );
  return h(
    'section',
    { 'aria-labelledby': 'steps-title' },
    h('h2', { id: 'steps-title' }, 'Steps'),
    items.length === 0
      ? h('p', { class: 'muted' }, 'No step has run yet.')
      : h('ol', { class: 'timeline' }, ...items),
  );
}

/** A step's duration for people: ms below a second, then seconds, then minutes. */
function duration(ms: number): string {
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)} s`;
  return `${(ms / 60_000).toFixed(1)} min`;
}

/** The statuses the task took, oldest first (kept from the store's upgrade on, at most the last 100). */
function history(t: TaskDetail): Child {
  const changes = t.history ?? [];
  if (changes.length === 0) return null;
  return h(
    'section',
    { 'aria-labelledby': 'history-title' },
    h('h2', { id: 'history-title' }, 'History'),
    h(
      'ol',
      { class: 'timeline' },
      ...changes.map((c) =>
        h(
          'li',
          { class: isTerminal(c.status) ? 'done' : 'pending', 'data-status': c.status },
          time(c.at),
          ' ',
          statusBadge(c.status),
          c.statusMessage === undefined ? '' : h('span', { class: 'muted' }, ` ${c.statusMessage}`),
        ),
      ),
    ),
  );
}
