// What a pause or a resume names: `POST /pauses` with `{"kind":"tool"|"key","name":"…","tenant":"…"}` (tenant left
// out: every tenant), `DELETE /pauses?kind=…&name=…&tenant=…`; bounded and checked before anything is done.
import type { IncomingMessage } from 'node:http';
import { pauseProblem, type PauseKind, type PauseTarget } from '../tasks/pauses.js';
import { isObject, readJsonBody, type BodyRefused } from './retry-body.js';

/** The largest pause body read (its names are at most a few hundred characters). */
export const MAX_PAUSE_BODY_BYTES = 4 * 1024;

const FIELDS = new Set(['kind', 'name', 'tenant']);

export type PauseRequest = { ok: true; target: PauseTarget } | BodyRefused;

const refuse = (message: string): BodyRefused => ({ ok: false, status: 'bad_request', message });

/** A pause's target from its fields (a body's, or a query's), or why it is refused. */
export function pauseTargetOf(fields: unknown): PauseRequest {
  if (!isObject(fields))
    return refuse('The body is a JSON object: {"kind":"tool"|"key","name":"…","tenant":"…"}');
  const extra = Object.keys(fields).find((k) => !FIELDS.has(k));
  if (extra !== undefined) return refuse(`Unknown field ${JSON.stringify(extra.slice(0, 40))}`);
  const { kind, name, tenant } = fields;
  if (typeof kind !== 'string' || typeof name !== 'string')
    return refuse(`kind ('tool' or 'key') and name are required strings`);
  if (tenant !== undefined && typeof tenant !== 'string') return refuse('tenant is a string');
  const target: PauseTarget = { kind: kind as PauseKind, name, ...(tenant === undefined ? {} : { tenant }) };
  const problem = pauseProblem(target);
  return problem === undefined ? { ok: true, target } : refuse(problem);
}

/** The target of `POST /pauses` (its body) or `DELETE /pauses` (its query). */
export async function readPauseRequest(
  req: IncomingMessage,
  action: 'pause' | 'resume',
  params: URLSearchParams,
): Promise<PauseRequest> {
  if (action === 'resume') {
    const keys = [...params.keys()];
    if (new Set(keys).size !== keys.length) return refuse('Each of kind, name and tenant may be given once');
    return pauseTargetOf(Object.fromEntries(params));
  }
  const read = await readJsonBody(req, MAX_PAUSE_BODY_BYTES);
  return read.ok ? pauseTargetOf(read.body) : read;
}
