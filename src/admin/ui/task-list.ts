// The task list: filters (kept in the address, so a reload or a shared link shows the same), newest first, one page
// at a time through the API's cursor; rows change in place as events arrive, and new matching tasks appear on top.
import { call, describeError } from './api.js';
import { bulkActions } from './bulk-actions.js';
import { h, notify, outcomeBadge, show, statusBadge, time } from './dom.js';
import { onLive } from './live.js';
import { toolName } from './overview.js';
import {
  OUTCOMES,
  STATUSES,
  isOutcomeUnknown,
  isRetryable,
  isTerminal,
  type TaskPage,
  type TaskRow,
} from './types.js';

const TEXT_FILTERS = [
  ['tool', 'Tool'],
  ['tenant', 'Tenant'],
  ['principal', 'Principal'],
  ['errorText', 'Error text'],
] as const;
// What the address may carry to the API: the filters, and a page size (limit).
const FILTERS = [
  'tool',
  'status',
  'outcome',
  'tenant',
  'principal',
  'errorText',
  'hasError',
  'errorOutcome',
  'limit',
];

/**
 * Whether a task shown by an event belongs in the list these filters make. A tool error's text is not in its row: a
 * search by error text takes in new tool errors on the next reload only.
 */
export function matches(filters: URLSearchParams, row: TaskRow): boolean {
  const eq = (name: 'tool' | 'tenant' | 'principal'): boolean =>
    !filters.has(name) || filters.get(name) === row[name];
  const anyOf = (name: 'status' | 'outcome'): boolean => {
    const list = filters.get(name);
    const value = row[name];
    return list === null || (value !== undefined && list.split(',').includes(value));
  };
  const hasError = filters.get('hasError');
  const errorText = filters.get('errorText')?.toLowerCase();
  const errorOutcome = filters.get('errorOutcome');
  return (
    eq('tool') &&
    eq('tenant') &&
    eq('principal') &&
    anyOf('status') &&
    anyOf('outcome') &&
    (hasError === null || (hasError === 'true') === isRetryable(row)) &&
    (errorText === undefined || (row.error?.message.toLowerCase().includes(errorText) ?? false)) &&
    (errorOutcome === null || row.error?.outcome === errorOutcome)
  );
}

export function taskListView(params: URLSearchParams): () => void {
  const filters = new URLSearchParams([...params].filter(([k, v]) => FILTERS.includes(k) && v !== ''));
  const cursor = params.get('cursor') ?? undefined;
  const body = h('tbody', {});
  const status = h('p', { class: 'muted', role: 'status', id: 'list-status' }, 'Loading…');
  const pager = h('nav', { class: 'pager', 'aria-label': 'Pages' });
  const actions = h('div', {});
  show(
    h(
      'section',
      { 'aria-labelledby': 'tasks-title' },
      h('h1', { id: 'tasks-title' }, 'Tasks'),
      filterForm(filters),
      actions,
      status,
      h('table', { class: 'tasks' }, h('caption', { class: 'sr-only' }, 'Tasks, newest first'), head(), body),
      pager,
    ),
  );
  const load = (): void => {
    const query = new URLSearchParams(filters);
    if (cursor !== undefined) query.set('cursor', cursor);
    call<TaskPage>('GET', `/tasks?${query.toString()}`).then(
      (page) => {
        body.replaceChildren(...page.items.map(row));
        status.textContent =
          page.items.length === 0 ? 'No tasks match.' : `${page.items.length} tasks on this page.`;
        pager.replaceChildren(...pagerLinks(filters, cursor, page.next));
      },
      (err: unknown) => {
        status.textContent = '';
        notify(`Could not list the tasks: ${describeError(err)}`, 'error');
      },
    );
  };
  actions.replaceChildren(bulkActions(filters, load));
  load();
  return onLive({
    resync: load,
    event(event) {
      const existing = body.querySelector<HTMLTableRowElement>(
        `tr[data-task-id="${CSS.escape(event.taskId)}"]`,
      );
      if ('removed' in event) existing?.remove();
      else if (existing !== null) {
        if ((existing.dataset.updated ?? '') <= event.task.updatedAt) existing.replaceWith(row(event.task));
      } else if (cursor === undefined && matches(filters, event.task)) {
        body.prepend(row(event.task));
        status.textContent = '';
      }
    },
  });
}

function filterForm(filters: URLSearchParams): HTMLFormElement {
  const field = (name: string, label: string, control: HTMLElement): HTMLElement =>
    h('div', { class: 'field' }, h('label', { for: `filter-${name}` }, label), control);
  const text = (name: string, label: string): HTMLElement =>
    field(
      name,
      label,
      h('input', { id: `filter-${name}`, name, type: 'search', value: filters.get(name) ?? '' }),
    );
  const select = (name: string, label: string, options: [string, string][]): HTMLElement =>
    field(
      name,
      label,
      h(
        'select',
        { id: `filter-${name}`, name },
        ...options.map(([value, text]) =>
          h('option', { value, selected: (filters.get(name) ?? '') === value }, text),
        ),
      ),
    );
  const form = h(
    'form',
    { class: 'filters', role: 'search', 'aria-label': 'Filter tasks' },
    select('status', 'Status', [
      ['', 'any'],
      ...STATUSES.map((s): [string, string] => [s, s.replace('_', ' ')]),
    ]),
    select('outcome', 'Outcome', [
      ['', 'any'],
      ...OUTCOMES.map((o): [string, string] => [o, o.replace('_', ' ')]),
      ['failed,tool_error', 'failed or tool error'],
    ]),
    ...TEXT_FILTERS.map(([name, label]) => text(name, label)),
    select('hasError', 'Has error', [
      ['', 'any'],
      ['true', 'yes'],
      ['false', 'no'],
    ]),
    // The word a failed task's error data gives as its outcome (the gateway's).
    select('errorOutcome', 'Error outcome', [
      ['', 'any'],
      ['unknown', 'outcome unknown'],
      ['not_sent', 'not sent'],
    ]),
    h(
      'div',
      { class: 'buttons' },
      h('button', { type: 'submit' }, 'Apply filters'),
      h('a', { href: '#/tasks', class: 'button secondary' }, 'Clear'),
    ),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const query = new URLSearchParams();
    for (const [name, value] of new FormData(form))
      if (typeof value === 'string' && value.trim() !== '') query.set(name, value.trim());
    location.hash = `#/tasks?${query.toString()}`;
  });
  return form;
}

const head = (): HTMLElement =>
  h(
    'thead',
    {},
    h(
      'tr',
      {},
      ...['Task', 'Status', 'Outcome', 'Tool', 'Owner', 'Runs', 'Updated', 'Message'].map((t) =>
        h('th', { scope: 'col' }, t),
      ),
    ),
  );

function row(task: TaskRow): HTMLTableRowElement {
  return h(
    'tr',
    { 'data-task-id': task.id, 'data-updated': task.updatedAt },
    h('td', {}, h('a', { href: `#/tasks/${encodeURIComponent(task.id)}`, class: 'mono' }, task.id)),
    h('td', { class: 'status' }, statusBadge(task.status)),
    h('td', { class: 'outcome' }, outcomeBadge(task.outcome)),
    h('td', {}, toolName(task.tool, task.toolVersion)),
    h('td', {}, `${task.principal} @ ${task.tenant}`),
    h('td', {}, task.attempt),
    h('td', {}, time(task.updatedAt)),
    message(task),
  );
}

/** A failed task's error, a tool error's status message (what its caller was told), or an unfinished task's. */
function message(task: TaskRow): HTMLElement {
  if (task.error !== undefined)
    return h(
      'td',
      { class: 'error-text' },
      isOutcomeUnknown(task) &&
        h('span', { class: 'badge outcome-unknown', 'data-error-outcome': 'unknown' }, 'outcome unknown'),
      isOutcomeUnknown(task) && ' ',
      task.error.message,
    );
  if (task.outcome === 'tool_error') return h('td', { class: 'error-text' }, task.statusMessage ?? '');
  return h('td', { class: 'muted' }, isTerminal(task.status) ? '' : (task.statusMessage ?? ''));
}

function pagerLinks(
  filters: URLSearchParams,
  cursor: string | undefined,
  next: string | undefined,
): HTMLElement[] {
  const links: HTMLElement[] = [];
  if (cursor !== undefined)
    links.push(h('a', { href: `#/tasks?${filters.toString()}`, class: 'button secondary' }, 'First page'));
  if (next !== undefined) {
    const query = new URLSearchParams(filters);
    query.set('cursor', next);
    links.push(h('a', { href: `#/tasks?${query.toString()}`, class: 'button', rel: 'next' }, 'Next page'));
  }
  return links;
}
