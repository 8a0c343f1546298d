// A task's payloads as operators read them (TaskAdmin.payloads), for both stores: each value opened where it is
// kept, or marked sealed when this process cannot open it (a key it lacks), so that one value never fails the read.
import type { AdminPayload, AdminTaskPayloads } from '../tasks/admin.js';
import { isSealedValue } from '../tasks/payload-cipher.js';
import type { JsonValue } from '../tasks/task.js';
import { sealedAt, type Opener } from './payload-sealing.js';

/** The columns a store reads: the task's arguments and result, and its input rows (in the order asked). */
export interface PayloadColumns {
  id: string;
  args: string;
  result: string | null;
  inputs: { key: string; request: string | null; answer: string | null }[];
}

export const SEALED: AdminPayload = { sealed: true };

/** One stored value: plaintext parsed, a sealed one opened, or SEALED when it does not open here. */
export function openPayload(stored: string, at: string, open: Opener): AdminPayload {
  if (!isSealedValue(stored)) return JSON.parse(stored) as JsonValue;
  try {
    return JSON.parse(open(stored, at)) as JsonValue;
  } catch {
    return SEALED;
  }
}

export function toAdminPayloads(row: PayloadColumns, open: Opener): AdminTaskPayloads {
  const payloads: AdminTaskPayloads = {
    arguments: openPayload(row.args, sealedAt('tasks.args', row.id), open),
    inputs: row.inputs.map(({ key, request, answer }) => ({
      key,
      ...(request === null
        ? {}
        : { request: openPayload(request, sealedAt('task_inputs.request', row.id, key), open) }),
      ...(answer === null
        ? {}
        : { answer: openPayload(answer, sealedAt('task_inputs.answer', row.id, key), open) }),
    })),
  };
  if (row.result !== null) payloads.result = openPayload(row.result, sealedAt('tasks.result', row.id), open);
  return payloads;
}

/** A step's stored value as operators' views read it (TaskAdmin.stepValue). */
export const openStepValue = (id: string, name: string, stored: string, open: Opener): AdminPayload =>
  openPayload(stored, sealedAt('task_steps.value', id, name), open);
