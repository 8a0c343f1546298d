// The overview: counts by status and finished tasks by outcome (each a link to the list), stuck tasks, recent windows,
// counts by tool. Read again (at most once a second) whenever a task changes.
import { call, describeError } from './api.js';
import { h, notify, outcomeBadge, show, statusBadge, time, type Child } from './dom.js';
import { reloadOnLive } from './live.js';
import { OUTCOMES, STATUSES, type Health, type Overview, type TaskPage } from './types.js';

const duration = (ms: number): string =>
  ms % 86_400_000 === 0
    ? `${ms / 86_400_000} d`
    : ms % 3_600_000 === 0
      ? `${ms / 3_600_000} h`
      : ms % 60_000 === 0
        ? `${ms / 60_000} min`
        : `${ms / 1000} s`;

export function overviewView(): () => void {
  return reloadOnLive((shown) => {
    // The health beside the counts: a server before it answers 404, shown as nothing to report.
    const health = call<Health>('GET', '/health').catch((): Health => ({ components: [] }));
    // On a gateway, how many of its tasks' outcomes are unknown (one indexed page; more shows as "100+").
    const unknown = health.then((hs) =>
      hs.components.some((c) => c.kind === 'upstream')
        ? call<TaskPage>('GET', `/tasks?errorOutcome=unknown&limit=${UNKNOWN_PAGE}`).then(
            (page) => (page.next === undefined ? String(page.items.length) : `${UNKNOWN_PAGE}+`),
            () => undefined,
          )
        : undefined,
    );
    Promise.all([call<Overview>('GET', '/overview'), health, unknown]).then(
      ([o, hs, n]) => {
        if (shown()) show(render(o, hs, n));
      },
      (err: unknown) => notify(`Could not read the overview: ${describeError(err)}`, 'error'),
    );
  });
}

const UNKNOWN_PAGE = 100;

function render(o: Overview, health: Health, unknown: string | undefined): HTMLElement {
  return h(
    'section',
    { 'aria-labelledby': 'overview-title' },
    h('h1', { id: 'overview-title' }, 'Overview'),
    healthSection(health, unknown),
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

const count = (n: number, noun: string): string => `${n} ${noun}${n === 1 ? '' : 's'}`;

export const toolName = (tool: string, version: string | undefined): string =>
  version === undefined ? tool : `${tool}@${version}`;

/**
 * What the server reports of its health (a gateway: its upstream, up or down since when, calls and errors, and the
 * metrics that show it over time), with a link to the tasks whose outcome is unknown; nothing for a plain server.
 */
function healthSection(health: Health, unknown: string | undefined): Child {
  if (health.components.length === 0) return null;
  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'health-title', id: 'health' },
    h('h2', { id: 'health-title' }, 'Health'),
    h(
      'ul',
      { class: 'health' },
      ...health.components.map((c) =>
        h(
          'li',
          { 'data-kind': c.kind, 'data-health': c.status },
          h('span', { class: `badge health-${c.status}` }, c.status),
          ' ',
          h('strong', {}, c.kind),
          ' ',
          h('span', { class: 'mono' }, c.name),
          c.since !== undefined && h('span', { class: 'muted' }, ' since ', time(c.since)),
          h(
            'span',
            { class: 'muted' },
            ` · ${count(c.calls ?? 0, 'call')}, ${count(c.errors ?? 0, 'error')}`,
            c.meanMs === undefined ? '' : `, mean ${c.meanMs} ms`,
          ),
          (c.metrics ?? []).length > 0 &&
            h(
              'details',
              {},
              h('summary', {}, 'Metrics (Prometheus, on /metrics)'),
              h('ul', {}, ...(c.metrics ?? []).map((m) => h('li', { class: 'mono' }, m))),
            ),
        ),
      ),
    ),
    health.components.some((c) => c.kind === 'upstream') &&
      h(
        'p',
        {},
        h(
          'a',
          { href: '#/tasks?errorOutcome=unknown', id: 'unknown-link' },
          'Tasks whose outcome is unknown',
        ),
        unknown !== undefined && ' ',
        unknown !== undefined && h('strong', { id: 'unknown-count' }, unknown),
        ' — calls the upstream may or may not have done: check each, then retry it or record its outcome.',
      ),
  );
}
