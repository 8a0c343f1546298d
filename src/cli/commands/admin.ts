// `durable-mcp admin …`: the operators' commands, over the server's operator API (every owner's tasks in their tenants).
import { UsageError } from '../args.js';
import { listTasks, listUsage } from './admin-list.js';
import { overview, overviewUsage } from './admin-overview.js';
import { taskVerb, taskVerbsUsage } from './admin-tasks.js';
import { flow, pauseUsage, pauseVerb } from './admin-pause.js';
import { event, eventUsage } from './event.js';

export const adminUsage = `durable-mcp admin <command> [flags]   (operators: every owner's tasks within your tenants)
  tasks list [filters]        search tasks: a table, or --output json (durable-mcp admin tasks list --help)
  tasks get <taskId>          everything the server keeps about a task: steps, attempts, lease, errors
  tasks cancel <taskId>       request cancellation of an unfinished task
  tasks retry <taskId>        run a failed task again from its last finished step
  tasks purge <taskId>        delete a finished task and all it keeps (asks first; --yes without a terminal)
  tasks cancel|retry|purge [filters] [--dry-run]
                              the same to every task the filters match (asks with the count; --yes without a
                              terminal; durable-mcp admin tasks cancel --help)
  overview                    counts by status and tool, recent activity, stuck tasks
  pause tool|key NAME         new runs of a tool's (or a concurrency key's) tasks wait until resumed
                              (--tenant T: only that tenant's; durable-mcp admin pause --help)
  resume tool|key NAME        lift a pause: its paused tasks run again, in their order
  flow                        concurrency keys with tasks waiting for a slot, and the pauses in force
  event send <taskId> <name>  deliver an event to a task waiting for it (--data JSON; durable-mcp event --help)
The token (--token or $DURABLE_MCP_TOKEN) must have the operator role; the API is /admin/api/v1 at the origin of
--url (default $DURABLE_MCP_URL or http://127.0.0.1:3000/mcp). Exit codes: 0 done, 1 task not found or the action
refused (409), 2 usage errors, 3 not an operator (401/403), no operator API, server or connection errors.`;

/** The help for the words given: `admin tasks list --help` shows the list's filters. */
export function adminHelp(argv: string[]): string {
  const [group, verb] = argv;
  if (group === 'overview') return overviewUsage;
  if (group === 'event') return eventUsage;
  if (group === 'pause' || group === 'resume' || group === 'flow') return pauseUsage;
  if (group !== 'tasks' || verb === undefined || verb.startsWith('-')) return adminUsage;
  return verb === 'list' ? listUsage : taskVerbsUsage;
}

export async function admin(argv: string[]): Promise<number> {
  const [group, verb] = argv;
  if (group === 'overview') return overview(argv);
  if (group === 'pause' || group === 'resume') return pauseVerb(argv);
  if (group === 'flow') return flow(argv);
  if (group === 'event') return event(argv.slice(1), true);
  if (group === 'tasks' && verb === 'list') return listTasks(argv);
  if (group === 'tasks' && verb !== undefined && !verb.startsWith('-')) return taskVerb(argv);
  throw new UsageError(
    group === undefined || group.startsWith('-') || group === 'tasks'
      ? adminUsage
      : `unknown admin command "${group}"\n\n${adminUsage}`,
  );
}
