// Pathological sizes, spread over the fuzz run: 10k-deep nesting, ~1 MB strings in ids, arguments, task ids and
// answers, and (every fifth time) a body over the limit.
import {
  CORRECT_PLAN,
  deepArray,
  deepObject,
  headersFor,
  hugeAscii,
  hugeNonAscii,
  OVERSIZE_HEADERS,
} from '../../../test/support/fuzz-model.js';
import { envelopeMeta, type FuzzRun } from './fuzz-run.js';

const request = (id: number | string, method: string, params: Record<string, unknown>): string =>
  JSON.stringify({ jsonrpc: '2.0', id, method, params });

/** The fixed table of [name, body text]; `taskIds` are real ids to answer. */
export function pathologicalBodies(taskIds: readonly string[]): [string, string][] {
  const meta = envelopeMeta({ elicitation: {}, sampling: {} });
  const inArguments = request(1, 'tools/call', {
    name: 'test_simple_text',
    arguments: { x: '__P__' },
    _meta: meta,
  });
  return [
    ['deep array', deepArray()],
    ['deep object', deepObject()],
    ['deep array in arguments', inArguments.replace('"__P__"', deepArray())],
    [
      '1 MB string id',
      JSON.stringify({ jsonrpc: '2.0', id: hugeAscii(), method: 'tools/list', params: { _meta: meta } }),
    ],
    [
      '~1 MB non-ASCII argument',
      request(2, 'tools/call', {
        name: 'chaos_job',
        arguments: { cid: hugeNonAscii() },
        _meta: envelopeMeta(),
      }),
    ],
    [
      '1 MB task id',
      request(3, 'tasks/get', { taskId: `task_${'A'.repeat(1_000_000)}`, _meta: envelopeMeta() }),
    ],
    [
      '1 MB input answer',
      request(4, 'tasks/update', {
        taskId: taskIds[1] ?? taskIds[0],
        inputResponses: { k0: { action: 'accept', content: { v: 'y'.repeat(1_000_000) } } },
        _meta: envelopeMeta(),
      }),
    ],
  ];
}

/** The `i`-th pathological case (round robin over the table). */
export async function runPathological(
  f: FuzzRun,
  table: [string, string][],
  oversize: string,
  i: number,
): Promise<void> {
  const [name, text] = table[i % table.length] as [string, string];
  f.count('pathological');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  await f.exchange(`pathological: ${name}`, text, headersFor(CORRECT_PLAN, parsed));
  if (i % 5 === 0) {
    f.count('oversize');
    await f.exchange('oversize', oversize, OVERSIZE_HEADERS);
  }
}
