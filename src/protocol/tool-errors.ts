// Errors a tool's handler throws: a tool execution error (an isError result) unless it is a protocol error.
import { randomBytes } from 'node:crypto';
import { errorParts, isControlFlow, stepErrorOrigin } from '../tasks/execution.js';
import type { TaskFailure } from '../tasks/task.js';
import { META_ERROR_REF } from '../wire/meta-keys.js';
import { isWireMappable, ProtocolError } from '../wire/protocol-error.js';
import type { JsonObject } from './types.js';

/**
 * True for an error that the caller should see as the tool's own failure: anything but a ProtocolError (or a domain
 * error carrying a wire code) and the runtime's control-flow signals.
 */
export const isToolExecutionError = (err: unknown): boolean =>
  !(err instanceof ProtocolError) && !isWireMappable(err) && !isControlFlow(err);

export const newErrorRef = (): string => `err_${randomBytes(9).toString('base64url')}`;

/** What is kept of a thrown error: name, message, stack, and the step and attempt it came from. */
export function describeFailure(err: unknown, at: number, ref = newErrorRef()): TaskFailure {
  const failure: TaskFailure = { ref, ...errorParts(err), at };
  const origin = stepErrorOrigin(err);
  if (origin !== undefined) {
    failure.step = origin.step;
    failure.attempt = origin.attempt;
  }
  return failure;
}

/**
 * The CallToolResult a thrown error becomes: its message as text, or, for a tool whose errors are private, a generic
 * text with the reference only. The reference is in `_meta` either way.
 */
export function toolErrorResult(
  failure: TaskFailure,
  visibility: 'public' | 'private' = 'public',
): JsonObject {
  const text =
    visibility === 'private'
      ? `The tool failed. Error reference: ${failure.ref}`
      : failure.message === ''
        ? `The tool failed (${failure.name}).`
        : failure.message;
  return {
    resultType: 'complete',
    content: [{ type: 'text', text }],
    isError: true,
    _meta: { [META_ERROR_REF]: failure.ref },
  };
}

/** A status message for a task that ended with a tool error (never more than the result itself shows). */
export const toolErrorStatus = (failure: TaskFailure, visibility: 'public' | 'private' = 'public'): string =>
  visibility === 'private'
    ? `The tool failed (error reference ${failure.ref}).`
    : `The tool failed: ${failure.message}`;
