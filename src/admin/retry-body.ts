// The bodies of operator requests, read up to a bound and checked before anything is done: a retry that records a
// step's value an operator verified (`{"record":{"step":"upstream","value":…}}`); a pause's (pause-request.ts).
import type { IncomingMessage } from 'node:http';
import type { AdminRecordedStep } from '../tasks/admin.js';
import type { JsonValue } from '../protocol/types.js';

/** The largest retry body read (a recorded value as large as a step value may be by default). */
export const MAX_RETRY_BODY_BYTES = 4 * 1024 * 1024;
const MAX_STEP_NAME = 200;

/** A body refused. */
export interface BodyRefused {
  ok: false;
  status: 'bad_request' | 'too_large';
  message: string;
}

export type RetryBody = { ok: true; record: AdminRecordedStep | undefined } | BodyRefused;

/** A request's JSON body (undefined: none), read up to `limit` bytes; over it, refused without being kept. */
export async function readJsonBody(
  req: IncomingMessage,
  limit: number,
): Promise<{ ok: true; body: unknown } | BodyRefused> {
  const chunks: Buffer[] = [];
  let size = 0;
  let over = false;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) over = true;
    if (!over) chunks.push(chunk);
  }
  if (over) return { ok: false, status: 'too_large', message: `The body is larger than ${limit} bytes` };
  const text = Buffer.concat(chunks).toString('utf8').trim();
  if (text === '') return { ok: true, body: undefined };
  try {
    return { ok: true, body: JSON.parse(text) as unknown };
  } catch {
    return { ok: false, status: 'bad_request', message: 'The body is not JSON' };
  }
}

/** Reads the body (none: a plain retry); a body over the bound is refused without being kept. */
export async function readRetryBody(req: IncomingMessage, limit = MAX_RETRY_BODY_BYTES): Promise<RetryBody> {
  const read = await readJsonBody(req, limit);
  if (!read.ok) return read;
  return read.body === undefined ? { ok: true, record: undefined } : recordOf(read.body);
}

export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** `{}` or `{"record":{"step","value"}}`, nothing else. */
function recordOf(body: unknown): RetryBody {
  const refuse = (message: string): RetryBody => ({ ok: false, status: 'bad_request', message });
  if (!isObject(body)) return refuse('The body is a JSON object: {"record":{"step":"…","value":…}}');
  const extra = Object.keys(body).filter((k) => k !== 'record');
  if (extra.length > 0) return refuse(`Unknown field ${JSON.stringify(extra[0])}`);
  const record = body.record;
  if (record === undefined) return { ok: true, record: undefined };
  if (!isObject(record) || Object.keys(record).some((k) => k !== 'step' && k !== 'value'))
    return refuse('record is {"step":"…","value":…}');
  const { step, value } = record;
  if (typeof step !== 'string' || step === '' || step.length > MAX_STEP_NAME || /\p{Cc}/u.test(step))
    return refuse(`record.step is a step's name: 1 to ${MAX_STEP_NAME} characters, no control characters`);
  if (!('value' in record)) return refuse('record.value is the value to keep (JSON; null for none)');
  return { ok: true, record: { step, value: value as JsonValue } };
}
