// `durable-mcp task inspect <id> --store …`: everything the store keeps about a task, read directly (operators).
import { createPayloadCipher, parseKeyring } from '../../tasks/payload-cipher.js';
import type { TaskStore } from '../../tasks/store.js';
import type { StepFailure, TaskFailure } from '../../tasks/task.js';
import type { TaskInspection } from '../../tasks/inspection.js';
import { createSqliteTaskStore } from '../../stores/sqlite/task-store.js';
import { parseFlags, UsageError } from '../args.js';
import { EXIT } from '../client-flags.js';
import { storeFrom, isPostgresUrl } from '../store-config.js';
import { historyLines, stepTiming } from '../inspection-timeline.js';
import {
  oneLine,
  printErr,
  printJson,
  printOut,
  terminalJson,
  terminalLine,
  terminalSafe,
} from '../terminal-text.js';

export const INSPECT_FLAGS = {
  store: { type: 'string' },
  'pg-schema': { type: 'string' },
  'encryption-key': { type: 'string' },
  output: { type: 'string' },
} as const;

export const inspectHelp = `  inspect   (operators) everything the store keeps about the task, whoever owns it: steps, attempts, the
            error a tool threw with its stack: --store PATH|postgres://… [--pg-schema NAME]
            [--encryption-key K (or $DURABLE_MCP_ENCRYPTION_KEY) to read encrypted payloads]`;

const iso = (t: number | null | undefined): string =>
  t === null || t === undefined || !Number.isFinite(t) ? '-' : new Date(t).toISOString();

const indent = (text: string, by: string): string =>
  text
    .split('\n')
    .map((line) => by + line)
    .join('\n');

function stepLine(step: TaskInspection['steps'][number]): string {
  const failed = (f: StepFailure): string =>
    oneLine`${step.failedAttempts} failed attempt${step.failedAttempts === 1 ? '' : 's'}, last ${f.name}: ${f.message}` +
    (f.final === true ? ' (no retry left)' : '');
  const timing = stepTiming(step);
  const parts = [step.done ? `done${timing === undefined ? '' : ` ${timing}`}` : 'not done'];
  if (step.lastFailure !== undefined) parts.push(failed(step.lastFailure));
  return `    ${terminalLine(step.name)}: ${parts.join('; ')}`;
}

/** The error a tool threw: where, its name and message, then its stack (kept on its lines, indented). */
function failureLines(f: TaskFailure): string[] {
  const origin = f.step === undefined ? '' : ` in step "${f.step}", attempt ${f.attempt ?? '?'}`;
  const lines = [oneLine`  tool error ${f.ref}${origin}: ${f.name}: ${f.message}`];
  if (f.stack !== undefined) lines.push(indent(terminalSafe(f.stack), '      '));
  return lines;
}

/**
 * The human view of an inspection. Every field the store holds came from a caller, a tool or a server: each is shown
 * on its line with its control characters escaped (`oneLine`), the stack on its own lines.
 */
export function describeInspection(t: TaskInspection): string {
  const ended = t.outcome === 'tool_error' ? ' (tool error)' : '';
  const message = t.statusMessage === undefined ? '' : ` — ${t.statusMessage}`;
  const version = t.toolVersion === undefined ? '' : `@${t.toolVersion}`;
  const lines = [
    oneLine`${t.id}: ${t.status}${ended}${message}`,
    oneLine`  tool ${t.tool}${version}, owner ${t.owner.tenant}/${t.owner.principal}, runs ${t.attempt}`,
    `  created ${iso(t.createdAt)}, updated ${iso(t.updatedAt)}, expires ${iso(t.expiresAt)}`,
  ];
  if (t.wakeAt !== undefined) lines.push(`  waiting until ${iso(t.wakeAt)}`);
  if (t.leaseOwner !== undefined) lines.push(oneLine`  leased by ${t.leaseOwner} until ${iso(t.leaseUntil)}`);
  if (t.pendingInputs !== undefined) lines.push(oneLine`  waiting for input: ${t.pendingInputs.join(', ')}`);
  if (t.cancelRequested) lines.push('  cancel requested');
  if (t.idempotencyKey !== undefined) lines.push(oneLine`  idempotency key ${t.idempotencyKey}`);
  if (t.traceId !== undefined) lines.push(oneLine`  trace ${t.traceId}`);
  if (t.retryOf !== undefined) lines.push(oneLine`  retry of ${t.retryOf}`);
  if (t.retries !== undefined && t.retries.length > 0)
    lines.push(oneLine`  retried as ${t.retries.join(', ')}`);
  if (t.parentId !== undefined) lines.push(oneLine`  child task of ${t.parentId}`);
  if (t.children !== undefined && t.children.length > 0)
    lines.push('  child tasks:', ...t.children.map((c) => oneLine`    ${c.id} ${c.tool}: ${c.status}`));
  if (t.error !== undefined) lines.push(`  error ${terminalJson(t.error)}`);
  if (t.failure !== undefined) lines.push(...failureLines(t.failure));
  lines.push(...historyLines(t));
  if (t.steps.length > 0) lines.push('  steps:', ...t.steps.map(stepLine));
  return lines.join('\n');
}

async function openForInspection(values: Record<string, unknown>): Promise<TaskStore> {
  const target = storeFrom(values.store);
  if (target === undefined)
    throw new UsageError('task inspect needs --store (the server’s SQLite file or PostgreSQL URL)');
  const keySpec = (values['encryption-key'] as string | undefined) ?? process.env.DURABLE_MCP_ENCRYPTION_KEY;
  let cipher;
  try {
    cipher = keySpec === undefined ? undefined : createPayloadCipher(parseKeyring(keySpec));
  } catch (err) {
    throw new UsageError(`--encryption-key: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (isPostgresUrl(target)) {
    const schema = values['pg-schema'] as string | undefined;
    const { createPostgresTaskStore } = await import('../postgres-store.js');
    // Reading needs no DDL: a schema that is not migrated yet is an error to report, not to fix from here.
    return createPostgresTaskStore({
      connectionString: target,
      schema,
      cipher,
      migrate: false,
      listen: false,
      poolSize: 1,
    });
  }
  return createSqliteTaskStore({ path: target, cipher });
}

export async function inspectTask(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, INSPECT_FLAGS, true);
  const [, taskId, ...extra] = positionals;
  if (taskId === undefined || extra.length > 0)
    throw new UsageError('task inspect needs exactly one task id');
  const store = await openForInspection(values);
  try {
    const found = await store.inspect?.(taskId, Date.now());
    if (found === undefined) {
      printErr(oneLine`${taskId}: no such task in this store`);
      return EXIT.failed;
    }
    if (values.output === 'json') printJson(found);
    else printOut(describeInspection(found));
    return EXIT.ok;
  } catch (err) {
    printErr(oneLine`task inspect: ${err instanceof Error ? err.message : String(err)}`);
    return EXIT.serverError;
  } finally {
    await store.close();
  }
}
