// Flow control: the concurrency keys at their limit (slots held, tasks waiting) and the pauses in force, each with a
// resume button; a form pauses a tool or a key, within the operator's tenants. Each change asks first. Read again (at
// most once a second) whenever a task changes.
import type { FlowJson, PauseJson, PausedJson, ResumedJson } from '../shapes.js';
import { call, describeError } from './api.js';
import { confirmAction, h, notify, show, time } from './dom.js';
import { reloadOnLive } from './live.js';
import type { Session } from './types.js';

const columns = (...titles: string[]): HTMLElement =>
  h('thead', {}, h('tr', {}, ...titles.map((t) => h('th', { scope: 'col' }, t))));

const named = (p: Pick<PauseJson, 'kind' | 'name' | 'tenant'>): string =>
  `${p.kind} “${p.name}” (${p.tenant === undefined ? 'every tenant' : `tenant ${p.tenant}`})`;

export function flowView(session: Session): () => void {
  const load = (shown: () => boolean): void => {
    call<FlowJson>('GET', '/flow').then(
      (flow) => {
        if (shown()) show(render(flow, session, () => load(shown)));
      },
      (err: unknown) => notify(`Could not read flow control: ${describeError(err)}`, 'error'),
    );
  };
  return reloadOnLive(load);
}

function render(flow: FlowJson, session: Session, reload: () => void): HTMLElement {
  return h(
    'section',
    { 'aria-labelledby': 'flow-title' },
    h('h1', { id: 'flow-title' }, 'Flow control'),
    keysTable(flow),
    pausesTable(flow.pauses, reload),
    pauseForm(session, reload),
  );
}

const keysTable = (flow: FlowJson): HTMLElement =>
  flow.keys.length === 0
    ? h('p', { class: 'muted', id: 'no-keys' }, 'No concurrency key has tasks waiting for a slot.')
    : h(
        'table',
        { 'aria-label': 'Keys at their limit' },
        h(
          'caption',
          {},
          flow.limited === true ? 'Keys at their limit (the first of more)' : 'Keys at their limit',
        ),
        columns('Key', 'Limit', 'Slots held', 'Waiting'),
        h(
          'tbody',
          {},
          ...flow.keys.map((k) =>
            h(
              'tr',
              { 'data-key': k.key },
              h('td', {}, h('code', {}, k.key)),
              h('td', {}, String(k.limit)),
              h('td', {}, String(k.slotsHeld)),
              h('td', {}, String(k.parked)),
            ),
          ),
        ),
      );

function pausesTable(pauses: PauseJson[], reload: () => void): HTMLElement {
  if (pauses.length === 0) return h('p', { class: 'muted', id: 'no-pauses' }, 'Nothing is paused.');
  return h(
    'table',
    { 'aria-label': 'Pauses' },
    h('caption', {}, 'Paused tools and keys'),
    columns('Paused', 'Name', 'Tenant', 'Since', 'Tasks held back', ''),
    h(
      'tbody',
      {},
      ...pauses.map((p) => {
        const button = h('button', { type: 'button', class: 'secondary' }, 'Resume');
        button.addEventListener('click', () => void resume(p, reload));
        return h(
          'tr',
          { 'data-pause': `${p.kind}:${p.name}` },
          h('td', {}, p.kind),
          h('td', {}, h('code', {}, p.name)),
          h('td', {}, p.tenant ?? 'every tenant'),
          h('td', {}, time(p.pausedAt)),
          h('td', { 'data-paused-tasks': '' }, String(p.pausedTasks)),
          h('td', {}, button),
        );
      }),
    ),
  );
}

async function resume(p: PauseJson, reload: () => void): Promise<void> {
  const asked = await confirmAction(
    `Resume ${named(p)}?`,
    `Its ${p.pausedTasks} paused task(s) run again, in their order, and new ones run as they come.`,
    'Resume',
    'Keep it paused',
  );
  if (!asked) return;
  const target = new URLSearchParams({ kind: p.kind, name: p.name });
  if (p.tenant !== undefined) target.set('tenant', p.tenant);
  try {
    const answer = await call<ResumedJson>('DELETE', `/pauses?${target.toString()}`);
    notify(`Resumed ${named(p)}: ${answer.resumed} task(s) run again.`);
    reload();
  } catch (err) {
    notify(`Resume refused: ${describeError(err)}`, 'error');
  }
}

/** The form that pauses a tool or a key: an operator of some tenants picks one of them. */
function pauseForm(session: Session, reload: () => void): HTMLElement {
  const tenants = session.operator.tenants;
  const field = (id: string, label: string, control: HTMLElement): HTMLElement =>
    h('div', { class: 'field' }, h('label', { for: id }, label), control);
  const kind = h(
    'select',
    { id: 'pause-kind', name: 'kind' },
    h('option', { value: 'tool' }, 'Tool'),
    h('option', { value: 'key' }, 'Concurrency key'),
  );
  const name = h('input', { id: 'pause-name', name: 'name', required: true, maxlength: '200' });
  const tenant =
    tenants === 'all'
      ? h('input', { id: 'pause-tenant', name: 'tenant', placeholder: 'every tenant', maxlength: '200' })
      : h(
          'select',
          { id: 'pause-tenant', name: 'tenant' },
          ...tenants.map((t) => h('option', { value: t }, t)),
        );
  const form = h(
    'form',
    { class: 'filters', 'aria-label': 'Pause a tool or a key' },
    field('pause-kind', 'Pause', kind),
    field('pause-name', 'Name', name),
    field('pause-tenant', 'Tenant', tenant),
    h('div', { class: 'field' }, h('button', { type: 'submit', class: 'danger' }, 'Pause')),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const t = tenant.value.trim();
    const target = {
      kind: kind.value as 'tool' | 'key',
      name: name.value,
      ...(t === '' ? {} : { tenant: t }),
    };
    void pause(target, reload);
  });
  return form;
}

async function pause(target: Pick<PauseJson, 'kind' | 'name' | 'tenant'>, reload: () => void): Promise<void> {
  const asked = await confirmAction(
    `Pause ${named(target)}?`,
    'New runs of its tasks wait, working, until it is resumed; runs already going finish.',
    'Pause',
    'Do not pause',
  );
  if (!asked) return;
  try {
    const answer = await call<PausedJson>('POST', '/pauses', target);
    notify(answer.created ? `Paused ${named(target)}.` : `${named(target)} was paused already.`);
    reload();
  } catch (err) {
    notify(`Pause refused: ${describeError(err)}`, 'error');
  }
}
