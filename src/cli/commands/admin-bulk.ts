// `durable-mcp admin tasks cancel|retry|purge --filter…`: the same change to every task a search matches within the
// operator's tenants, through the operator API's bulk route; a dry run counts them, and a change asks first.
import type { BulkJson } from '../../admin/shapes.js';
import { AdminTransportError, type AdminApi, type Answer } from '../admin-api.js';
import { reportAdminError } from '../admin-report.js';
import { UsageError } from '../args.js';
import { EXIT } from '../client-flags.js';
import { confirm } from '../prompt.js';
import { oneLine, printErr, printJson, printOut } from '../terminal-text.js';
import { filterQuery, filtersHelp, type Values } from './admin-filters.js';

export type BulkAction = 'cancel' | 'retry' | 'purge';

export const bulkUsage = `durable-mcp admin tasks <cancel|retry|purge> [filters] [--dry-run] [--yes]   (operators)
  the change to every task in your tenants that the filters match when it runs (at most 10000 per call: run it
  again for the rest), each by the rules of the one-task change: cancel unfinished tasks, retry those that failed
  or ended in a tool error (as new tasks), purge finished ones; the others are counted as skipped
  --dry-run  only count the matching tasks
  --yes      do not ask (without a terminal, a change needs it; on one, it asks with the count)
${filtersHelp}`;

const WHAT = { cancel: 'cancel', retry: 'retry', purge: 'purge (delete for good)' } as const;

function asBulk(body: unknown): BulkJson {
  const answer = body as Answer<BulkJson>;
  if (typeof answer.matched !== 'number')
    throw new AdminTransportError('the answer to a bulk change is not a count of tasks');
  return answer as BulkJson;
}

/** What a bulk change did, in words. */
function describe(action: BulkAction, answer: BulkJson): string {
  const skipped = Object.entries(answer.skipped ?? {}).map(([why, n]) => `${n} ${why}`);
  const lines = [
    answer.dryRun === true
      ? `${answer.matched} task(s) match`
      : oneLine`${action}: ${answer.touched ?? 0} of ${answer.matched} matching task(s)` +
        (skipped.length === 0 ? '' : oneLine` (skipped: ${skipped.join(', ')})`),
  ];
  if (answer.limited === true)
    lines.push('stopped at the bound of one call: more tasks may match, run it again');
  return lines.join('\n');
}

/** Runs a bulk change; `values` are the command's flags (filters, --dry-run, --yes, --output). */
export async function bulkChange(
  api: AdminApi,
  action: BulkAction,
  values: Values,
  json: boolean,
): Promise<number> {
  const query = filterQuery(values);
  if (query.size === 0)
    throw new UsageError(`admin tasks ${action} needs a task id or at least one filter\n\n${bulkUsage}`);
  const dryRun = values['dry-run'] === true;
  if (!dryRun && values.yes !== true && process.stdin.isTTY !== true)
    throw new UsageError(
      `a bulk ${action} changes every matching task: pass --yes (there is no terminal to ask on)`,
    );
  try {
    const proof = await api.session();
    const send = async (dry: boolean): Promise<BulkJson> => {
      const q = new URLSearchParams(query);
      if (dry) q.set('dryRun', 'true');
      return asBulk(await api.act(proof, 'POST', `/bulk/${action}?${q.toString()}`));
    };
    if (!dryRun && values.yes !== true) {
      const count = await send(true);
      if (count.matched === 0) {
        printErr('no task matches');
        return EXIT.ok;
      }
      const more = count.limited === true ? ' (the first of more)' : '';
      if (!(await confirm(`${WHAT[action]} ${count.matched} matching task(s)${more}?`))) {
        printErr('nothing changed');
        return EXIT.failed;
      }
    }
    const answer = await send(dryRun);
    if (json) printJson({ ...answer, action });
    else printOut(describe(action, answer));
    return EXIT.ok;
  } catch (err) {
    return reportAdminError(err, api.base);
  }
}
