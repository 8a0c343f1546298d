// `durable-mcp admin tasks list`: search every owner's tasks through the operator API, one page or (--all) every one.
import type { TaskPageJson } from '../../admin/shapes.js';
import { adminApiFromFlags, AdminTransportError, type AdminApi, type Answer } from '../admin-api.js';
import { reportAdminError } from '../admin-report.js';
import { taskTable } from '../admin-view.js';
import { intFlag, parseFlags, UsageError } from '../args.js';
import { FILTER_FLAGS, filterQuery, filtersHelp, oneOf, type Values } from './admin-filters.js';
import { CLIENT_FLAGS, clientFlagsHelp, EXIT, jsonOutput } from '../client-flags.js';
import { oneLine, printJson, printOut } from '../terminal-text.js';

export const listUsage = `durable-mcp admin tasks list [filters] [flags]   (operators: every owner's tasks in your tenants)
${filtersHelp}
  --sort created|updated     (default created)    --order asc|desc   (default desc: newest first)
  --limit N                  tasks per page, 1–500 (default: the server's)
  --cursor C                 the next page, as the previous one printed it
  --all [--max N]            follow the cursors to the end, at most N tasks (default 10000); one JSON object
${clientFlagsHelp}`;

const LIST_FLAGS = {
  ...CLIENT_FLAGS,
  ...FILTER_FLAGS,
  sort: { type: 'string' },
  order: { type: 'string' },
  limit: { type: 'string' },
  cursor: { type: 'string' },
  all: { type: 'boolean' },
  max: { type: 'string' },
} as const;

const MAX_PAGE = 500;

/** The query string of the search (without limit and cursor); every flag checked. */
function searchQuery(values: Values): URLSearchParams {
  const q = filterQuery(values);
  for (const [name, words] of [
    ['sort', ['created', 'updated']],
    ['order', ['asc', 'desc']],
  ] as const) {
    const value = oneOf(values, name, words);
    if (value !== undefined) q.set(name, value);
  }
  return q;
}

function asPage(body: unknown): TaskPageJson {
  const page = body as Answer<TaskPageJson>;
  if (!Array.isArray(page.items) || (page.next !== undefined && typeof page.next !== 'string'))
    throw new AdminTransportError('the answer to GET /tasks is not a page of tasks');
  return page as TaskPageJson;
}

/** Follows the cursors from `cursor` until the last page or `max` tasks; `next` is set when `max` stopped it. */
async function collect(
  api: AdminApi,
  query: URLSearchParams,
  pageSize: number,
  max: number,
  cursor: string | undefined,
): Promise<TaskPageJson> {
  const items: TaskPageJson['items'] = [];
  for (;;) {
    const q = new URLSearchParams(query);
    q.set('limit', String(Math.min(pageSize, max - items.length)));
    if (cursor !== undefined) q.set('cursor', cursor);
    const page = asPage(await api.get('/tasks', q));
    items.push(...page.items);
    if (page.next === undefined) return { items };
    if (items.length >= max) return { items, next: page.next };
    if (page.next === cursor) throw new AdminTransportError('the server answered the same cursor twice');
    cursor = page.next;
  }
}

export async function listTasks(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, LIST_FLAGS, true);
  if (positionals.length > 2) throw new UsageError(`unexpected "${positionals[2]}"\n\n${listUsage}`);
  const json = jsonOutput(values);
  const query = searchQuery(values);
  const limit = values.limit === undefined ? undefined : intFlag(values.limit, 'limit', 0, 1);
  if (limit !== undefined && limit > MAX_PAGE) throw new UsageError(`--limit must be at most ${MAX_PAGE}`);
  if (values.max !== undefined && values.all !== true) throw new UsageError('--max goes with --all');
  const max = intFlag(values.max, 'max', 10_000, 1);
  const cursor = values.cursor as string | undefined;
  const api = adminApiFromFlags(values);
  try {
    let page: TaskPageJson;
    if (values.all === true) page = await collect(api, query, limit ?? MAX_PAGE, max, cursor);
    else {
      if (limit !== undefined) query.set('limit', String(limit));
      if (cursor !== undefined) query.set('cursor', cursor);
      const body = await api.get('/tasks', query);
      page = asPage(body);
    }
    if (json) printJson(page);
    else {
      printOut(taskTable(page.items));
      if (page.next !== undefined)
        printOut(
          oneLine`${values.all === true ? `stopped at --max ${max}; ` : ''}next page: --cursor ${page.next}`,
        );
    }
    return EXIT.ok;
  } catch (err) {
    return reportAdminError(err, api.base);
  }
}
