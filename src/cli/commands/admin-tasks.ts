// `durable-mcp admin tasks get|cancel|retry|purge <id>`: one task of any owner, through the operator API.
import type { RetriedJson, TaskDetailJson } from '../../admin/shapes.js';
import {
  AdminApiError,
  adminApiFromFlags,
  AdminTransportError,
  type AdminApi,
  type Answer,
} from '../admin-api.js';
import { reportAdminError } from '../admin-report.js';
import { describeUpstream, inspectionOf } from '../admin-view.js';
import { parseFlags, UsageError } from '../args.js';
import { CLIENT_FLAGS, clientFlagsHelp, EXIT, jsonOutput } from '../client-flags.js';
import { readJsonValue } from '../json-input.js';
import { confirm } from '../prompt.js';
import { oneLine, printErr, printJson, printOut } from '../terminal-text.js';
import { describeInspection } from './task-inspect.js';
import { bulkChange, bulkUsage } from './admin-bulk.js';
import { FILTER_FLAGS } from './admin-filters.js';

export const taskVerbsUsage = `durable-mcp admin tasks <get|cancel|retry|purge> <taskId> [--yes] [flags]   (operators)
  get      everything the server keeps about the task, whoever owns it: steps, attempts, lease, errors
  cancel   request cancellation of an unfinished task
  retry    run a task that failed or ended in a tool error again from its last finished step, as a new task
           (the task itself stays as it ended; the new one copies its finished steps, which do not run again)
           --record-step NAME --value JSON|@file|-  also keep NAME's value, which you verified, in the new task: its
           run takes it instead of running that step (e.g. \`upstream\`, the call of a gateway task whose outcome
           was unknown and that you checked was done, with the result it had)
  purge    delete a finished task and all it keeps; asks first on a terminal, needs --yes without one
  --yes    do not ask

${bulkUsage}
${clientFlagsHelp}`;

const TASK_FLAGS = {
  ...CLIENT_FLAGS,
  ...FILTER_FLAGS,
  yes: { type: 'boolean' },
  'dry-run': { type: 'boolean' },
  'record-step': { type: 'string' },
  value: { type: 'string' },
} as const;

/** The new task a retry answered, if the answer names one. */
const newTask = (body: unknown): string => {
  const id = (body as Answer<RetriedJson> | null)?.taskId;
  return typeof id === 'string' ? id : '?';
};

/** Each action: its method, its path under the task, and what it did in words (from the id and the answer). */
const ACTIONS = {
  cancel: { method: 'POST', path: '/cancel', done: (id: string) => `cancel requested for task ${id}` },
  retry: {
    method: 'POST',
    path: '/retry',
    done: (id: string, body: unknown) => oneLine`task ${id} retried as new task ${newTask(body)}`,
  },
  purge: { method: 'DELETE', path: '', done: (id: string) => `task ${id} purged` },
} as const;

type Action = keyof typeof ACTIONS;
const isAction = (verb: string): verb is Action => Object.hasOwn(ACTIONS, verb);

const taskPath = (id: string): string => `/tasks/${encodeURIComponent(id)}`;

/** A 404 of `GET /tasks/{id}` means "not found" only if the server has an operator API at all. */
async function hasApi(api: AdminApi): Promise<boolean> {
  try {
    await api.get('/session');
    return true;
  } catch (err) {
    return !(err instanceof AdminApiError && err.status === 404);
  }
}

async function getTask(api: AdminApi, id: string, json: boolean): Promise<number> {
  try {
    const body = await api.get(taskPath(id));
    if (typeof (body as Answer<TaskDetailJson>).id !== 'string')
      throw new AdminTransportError(`the answer to GET ${taskPath(id)} is not a task`);
    if (json) printJson(body);
    else {
      printOut(describeInspection(inspectionOf(body as Answer<TaskDetailJson>)));
      const upstream = describeUpstream(body as Answer<TaskDetailJson>);
      if (upstream !== undefined) printOut(upstream);
    }
    return EXIT.ok;
  } catch (err) {
    const missing = err instanceof AdminApiError && err.status === 404 && (await hasApi(api));
    return reportAdminError(err, api.base, missing ? id : undefined);
  }
}

async function act(
  api: AdminApi,
  action: Action,
  id: string,
  json: boolean,
  body?: unknown,
): Promise<number> {
  const { method, path, done } = ACTIONS[action];
  let proof;
  try {
    proof = await api.session();
  } catch (err) {
    return reportAdminError(err, api.base); // a 404 here: no operator API
  }
  try {
    const answer = await api.act(proof, method, taskPath(id) + path, body);
    if (json) printJson({ ...(answer as object), id, action });
    else printOut(done(id, answer));
    return EXIT.ok;
  } catch (err) {
    return reportAdminError(err, api.base, id); // a 404 here: no such task (in the operator's scope)
  }
}

export async function taskVerb(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, TASK_FLAGS, true);
  const [, verb = '', id, ...extra] = positionals;
  if (verb !== 'get' && !isAction(verb))
    throw new UsageError(`unknown admin tasks command "${verb}"\n\n${taskVerbsUsage}`);
  const json = jsonOutput(values);
  const api = adminApiFromFlags(values);
  if (id === undefined && verb !== 'get') return bulkChange(api, verb, values, json);
  if (id === undefined || id === '' || extra.length > 0)
    throw new UsageError(`admin tasks ${verb} needs exactly one task id`);
  const filter = Object.keys(FILTER_FLAGS).find((name) => values[name] !== undefined);
  if (filter !== undefined || values['dry-run'] !== undefined)
    throw new UsageError(`--${filter ?? 'dry-run'} goes with a bulk change, without a task id`);
  if (verb === 'get') return getTask(api, id, json);
  if (verb === 'purge' && values.yes !== true) {
    if (process.stdin.isTTY !== true)
      throw new UsageError('purge deletes the task for good: pass --yes (there is no terminal to ask on)');
    if (!(await confirm(`purge task ${id} and everything kept about it?`))) {
      printErr('nothing purged');
      return EXIT.failed;
    }
  }
  return act(api, verb, id, json, await recordOf(verb, values));
}

/** A retry's recorded step from --record-step and --value (both or neither), as the API's body. */
async function recordOf(
  verb: string,
  values: Record<string, string | boolean | undefined>,
): Promise<unknown> {
  const step = values['record-step'];
  const value = values.value;
  if (step === undefined && value === undefined) return undefined;
  if (verb !== 'retry') throw new UsageError('--record-step and --value go with admin tasks retry');
  if (typeof step !== 'string' || step === '' || typeof value !== 'string')
    throw new UsageError('give --record-step NAME and --value JSON (or @file, or - for stdin) together');
  return { record: { step, value: await readJsonValue(value, '--value') } };
}
