// The task list's bulk actions: cancel, retry or purge every task the list's filters match (not only the page shown),
// each first counted by a dry run and confirmed with that count; then the page says how many tasks were changed.
import type { BulkJson } from '../shapes.js';
import { call, describeError } from './api.js';
import { confirmAction, h, notify } from './dom.js';

interface BulkAction {
  action: 'cancel' | 'retry' | 'purge';
  label: string;
  explain: string;
}

const BULK_ACTIONS: readonly BulkAction[] = [
  {
    action: 'cancel',
    label: 'Cancel',
    explain: 'Each unfinished task is asked to stop; finished ones are left as they are.',
  },
  {
    action: 'retry',
    label: 'Retry',
    explain:
      'Each task that failed or ended in a tool error runs again as a new task from its last finished step; the ' +
      'others are left as they are.',
  },
  {
    action: 'purge',
    label: 'Purge',
    explain:
      'Each finished task and everything kept about it are deleted: this cannot be undone. Unfinished ' +
      'tasks are left.',
  },
];

/** What a bulk change answered, in words. */
function summary(label: string, answer: BulkJson): string {
  const skipped = Object.entries(answer.skipped ?? {}).map(([why, n]) => `${n} ${why.replace('_', ' ')}`);
  const more = answer.limited === true ? ' More tasks may match: run it again.' : '';
  const left = skipped.length === 0 ? '' : ` (left: ${skipped.join(', ')})`;
  return `${label}: ${answer.touched ?? 0} of ${answer.matched} matching tasks${left}.${more}`;
}

async function run(filters: URLSearchParams, bulk: BulkAction, reload: () => void): Promise<void> {
  const path = (dryRun: boolean): string => {
    const query = new URLSearchParams(filters);
    if (dryRun) query.set('dryRun', 'true');
    return `/bulk/${bulk.action}?${query.toString()}`;
  };
  try {
    const count = await call<BulkJson>('POST', path(true));
    if (count.matched === 0) {
      notify(`No task matches these filters: nothing to ${bulk.action}.`);
      return;
    }
    const many = `${count.matched}${count.limited === true ? ' (the first of more)' : ''}`;
    const title = `${bulk.label} ${many} matching tasks?`;
    if (
      !(await confirmAction(
        title,
        bulk.explain,
        `${bulk.label} ${count.matched} tasks`,
        'Keep the tasks as they are',
      ))
    )
      return;
    notify(summary(bulk.label, await call<BulkJson>('POST', path(false))));
    reload();
  } catch (err) {
    notify(`${bulk.label} refused: ${describeError(err)}`, 'error');
  }
}

/** The buttons, for the list's filters (without its page size). */
export function bulkActions(filters: URLSearchParams, reload: () => void): HTMLElement {
  const only = new URLSearchParams([...filters].filter(([name]) => name !== 'limit'));
  return h(
    'div',
    { class: 'actions', role: 'group', 'aria-label': 'Bulk actions on every matching task' },
    ...BULK_ACTIONS.map((bulk) => {
      const button = h(
        'button',
        { type: 'button', class: 'secondary', 'data-bulk': bulk.action },
        `${bulk.label} all matching`,
      );
      button.addEventListener('click', () => void run(only, bulk, reload));
      return button;
    }),
  );
}
