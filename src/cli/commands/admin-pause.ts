// `durable-mcp admin pause|resume tool|key NAME [--tenant T]` and `durable-mcp admin flow`: operators' pauses of a
// tool or a concurrency key, and the view of the keys at their limit and the pauses, through the operator API.
import type { FlowJson, PausedJson, ResumedJson } from '../../admin/shapes.js';
import { pauseProblem, type PauseKind, type PauseTarget } from '../../tasks/pauses.js';
import { AdminApiError, adminApiFromFlags, type Answer } from '../admin-api.js';
import { reportAdminError } from '../admin-report.js';
import { describeFlow } from '../admin-view.js';
import { parseFlags, UsageError } from '../args.js';
import { CLIENT_FLAGS, clientFlagsHelp, EXIT, jsonOutput } from '../client-flags.js';
import { oneLine, printErr, printJson, printOut } from '../terminal-text.js';

export const pauseUsage = `durable-mcp admin pause|resume <tool|key> NAME [--tenant T] [flags]   (operators)
  pause    new runs of the tool's tasks (or of the tasks of a concurrency key, as stored: see admin flow) wait,
           working, until it is resumed; runs already going finish
  resume   lift the pause: its paused tasks run again, in their order
  --tenant T   only tenant T's tasks (an operator of some tenants must name one of them; without it, every tenant's)
durable-mcp admin flow [--max N] [flags]
  the concurrency keys with tasks waiting for a slot (key, limit, slots held, tasks waiting; at most N, default 50)
  and the pauses in force with the tasks they hold back
${clientFlagsHelp}`;

const PAUSE_FLAGS = { ...CLIENT_FLAGS, tenant: { type: 'string' } } as const;
const FLOW_FLAGS = { ...CLIENT_FLAGS, max: { type: 'string' } } as const;

/** The pause the words name: `tool NAME` or `key NAME`, with --tenant; a usage error otherwise. */
function targetOf(verb: string, positionals: string[], tenant: unknown): PauseTarget {
  const [, kind, name, extra] = positionals;
  if ((kind !== 'tool' && kind !== 'key') || name === undefined || extra !== undefined)
    throw new UsageError(`admin ${verb} needs "tool NAME" or "key NAME"\n\n${pauseUsage}`);
  const target: PauseTarget = {
    kind: kind as PauseKind,
    name,
    ...(typeof tenant === 'string' ? { tenant } : {}),
  };
  const problem = pauseProblem(target);
  if (problem !== undefined) throw new UsageError(oneLine`admin ${verb}: ${problem}`);
  return target;
}

const what = (t: PauseTarget): string =>
  oneLine`${t.kind} "${t.name}"${t.tenant === undefined ? ' (every tenant)' : oneLine` (tenant ${t.tenant})`}`;

/** A refusal of a pause or a resume in words (403: outside the operator's tenants; 404: no such pause). */
function refused(err: unknown, target: PauseTarget): number | undefined {
  if (!(err instanceof AdminApiError) || err.code === 'csrf') return undefined;
  if (err.status === 403 && err.code === 'forbidden' && !/operator role/i.test(err.message)) {
    printErr(oneLine`cannot pause ${what(target)}: ${err.message}`);
    return EXIT.failed;
  }
  if (err.status === 404 && /pause/i.test(err.message)) {
    printErr(oneLine`${what(target)}: ${err.message}`);
    return EXIT.failed;
  }
  return undefined;
}

/** `admin pause …` and `admin resume …`. */
export async function pauseVerb(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, PAUSE_FLAGS, true);
  const verb = positionals[0] === 'resume' ? 'resume' : 'pause';
  const target = targetOf(verb, positionals, values.tenant);
  const json = jsonOutput(values);
  const api = adminApiFromFlags(values);
  try {
    const proof = await api.session();
    if (verb === 'pause') {
      const answer = (await api.act(proof, 'POST', '/pauses', target)) as Answer<PausedJson>;
      if (json) printJson(answer);
      else
        printOut(answer.created === false ? `${what(target)} was paused already` : `paused ${what(target)}`);
    } else {
      const query = new URLSearchParams({ kind: target.kind, name: target.name });
      if (target.tenant !== undefined) query.set('tenant', target.tenant);
      const answer = (await api.act(proof, 'DELETE', `/pauses?${query.toString()}`)) as Answer<ResumedJson>;
      if (json) printJson(answer);
      else
        printOut(oneLine`resumed ${what(target)}: ${String(answer.resumed ?? 0)} paused task(s) run again`);
    }
    return EXIT.ok;
  } catch (err) {
    return refused(err, target) ?? reportAdminError(err, api.base);
  }
}

/** `admin flow`. */
export async function flow(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, FLOW_FLAGS, true);
  if (positionals.length > 1) throw new UsageError(`unexpected "${positionals[1]}"\n\n${pauseUsage}`);
  const max = String(values.max ?? '50');
  if (!/^\d{1,3}$/.test(max) || Number(max) < 1 || Number(max) > 500)
    throw new UsageError(`--max must be a whole number from 1 to 500 (got "${max}")`);
  const json = jsonOutput(values);
  const api = adminApiFromFlags(values);
  try {
    const body = (await api.get('/flow', new URLSearchParams({ max }))) as Answer<FlowJson>;
    if (json) printJson(body);
    else printOut(describeFlow(body));
    return EXIT.ok;
  } catch (err) {
    return reportAdminError(err, api.base);
  }
}
