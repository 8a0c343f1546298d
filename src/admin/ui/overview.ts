// The overview: counts by status and finished tasks by outcome (each a link to the list), stuck tasks, recent windows,
// counts by tool. Read again (at most once a second) whenever a task changes.
import { call, describeError } from './api.js';
import { h, notify, outcomeBadge, show, statusBadge } from './dom.js';
import { onLive } from './live.js';
import { OUTCOMES, STATUSES, type Overview } from './types.js';

const duration = (ms: number): string =>
  ms % 86_400_000 === 0
    ? `${ms / 86_400_000} d`
    : ms % 3_600_000 === 0
      ? `${ms / 3_600_000} h`
      : ms % 60_000 === 0
        ? `${ms / 60_000} min`
        : `${ms / 1000} s`;

export function overviewView(): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  const load = (): void => {
    call<Overview>('GET', '/overview').then(
      (o) => {
        if (!stopped) show(render(o));
      },
      (err: unknown) => notify(`Could not read the overview: ${describeError(err)}`, 'error'),
    );
  };
  const later = (): void => {
    timer ??= setTimeout(() => {
      timer = undefined;
      load();
    }, 1000);
  };
  const off = onLive({ event: later, resync: later });
  load();
  return () => {
    stopped = true;
    off();
    if (timer !== undefined) clearTimeout(timer);
  };
}

function render(o: Overview): HTMLElement {
  return h(
    'section',
    { 'aria-labelledby': 'overview-title' },
    h('h1', { id: 'overview-title' }, 'Overview'),
    statusCounts(o),
    h(
      'p',
      { class: 'muted', id: 'outcomes-title' },
      'Finished tasks by outcome (a tool error apart from a completion)',
    ),
    outcomeCounts(o),
    h('div', { class: 'grid' }, windowTable(o), toolTable(o)),
  );
}

/** Counts by status, each a link to the list, and the stuck tasks. */
const statusCounts = (o: Overview): HTMLElement =>
  h(
    'ul',
    { class: 'counts', 'aria-label': 'Tasks by status' },
    ...STATUSES.map((s) =>
      h(
        'li',
        { 'data-status': s },
        h('a', { href: `#/tasks?status=${s}` }, statusBadge(s), h('strong', {}, String(o.byStatus[s] ?? 0))),
      ),
    ),
    h(
      'li',
      { 'data-status': 'stuck' },
      h('span', { class: 'badge' }, 'stuck'),
      h('strong', {}, String(o.stuck)),
    ),
  );

/** Finished tasks by outcome, each a link to the list. */
const outcomeCounts = (o: Overview): HTMLElement =>
  h(
    'ul',
    { class: 'counts', 'aria-labelledby': 'outcomes-title' },
    ...OUTCOMES.map((outcome) =>
      h(
        'li',
        { 'data-outcome': outcome },
        h(
          'a',
          { href: `#/tasks?outcome=${outcome}` },
          outcomeBadge(outcome),
          // Absent from a server before outcomes: nothing to count.
          h('strong', {}, String(o.byOutcome?.[outcome] ?? '—')),
        ),
      ),
    ),
  );

const head = (...titles: string[]): HTMLElement =>
  h('thead', {}, h('tr', {}, ...titles.map((t) => h('th', { scope: 'col' }, t))));

const windowTable = (o: Overview): HTMLElement =>
  h(
    'table',
    {},
    h('caption', {}, 'Recent activity'),
    head('Last', 'Created', 'Completed', 'Tool errors', 'Failed'),
    h(
      'tbody',
      {},
      ...o.windows.map((w) =>
        h(
          'tr',
          {},
          h('th', { scope: 'row' }, duration(w.windowMs)),
          h('td', {}, w.created),
          h('td', {}, w.completed),
          h('td', {}, w.toolErrors ?? '—'),
          h('td', {}, w.failed),
        ),
      ),
    ),
  );

const toolTable = (o: Overview): HTMLElement =>
  h(
    'table',
    {},
    h('caption', {}, 'By tool'),
    head('Tool', 'Status', 'Tasks'),
    h(
      'tbody',
      {},
      ...o.byTool.map((t) =>
        h(
          'tr',
          {},
          h(
            'th',
            { scope: 'row' },
            h('a', { href: `#/tasks?tool=${encodeURIComponent(t.tool)}` }, toolName(t.tool, t.toolVersion)),
          ),
          h('td', {}, statusBadge(t.status)),
          h('td', {}, t.count),
        ),
      ),
    ),
  );

export const toolName = (tool: string, version: string | undefined): string =>
  version === undefined ? tool : `${tool}@${version}`;
