// tasks/get, tasks/update and tasks/cancel: owner-scoped, for requests that declare the tasks extension.
import type { TaskMethod } from '../../wire/methods.js';
import { isTerminal, ownerOf, type LookupMiss, type TaskOwner, type TaskSnapshot } from '../../tasks/task.js';
import type { TaskStore } from '../../tasks/store.js';
import { hasExtension } from '../../wire/envelope.js';
import { isJsonObject, memoizeSerialization } from '../../wire/jsonrpc.js';
import { META_CHILD_TASKS, META_PARENT_TASK, TASKS_EXTENSION } from '../../wire/meta-keys.js';
import { invalidParams, missingCapability, ProtocolError } from '../../wire/protocol-error.js';
import type { MethodHandler, RequestScope } from '../scope.js';
import type { JsonObject } from '../types.js';
import { answerInputs, cancelTask, deny, readId, TOO_MANY_REQUESTS, type TaskAccess } from './task-access.js';
import { toDetailedTask } from './task-wire.js';

const ACK = { resultType: 'complete' };

/** The capabilities a request lacking the extension is told to declare. */
export const REQUIRED = { extensions: { [TASKS_EXTENSION]: {} } };

function requireExtension(scope: RequestScope): void {
  if (!hasExtension(scope.envelope.clientCapabilities, TASKS_EXTENSION)) {
    throw missingCapability(
      `${scope.method} needs the ${TASKS_EXTENSION} extension in this request's capabilities`,
      REQUIRED,
    );
  }
}

/**
 * A terminal snapshot never changes: its tasks/get result is built and serialised once (stores may hand back the
 * same snapshot object for repeated polls).
 */
function getResults(): (snapshot: TaskSnapshot) => JsonObject {
  const finished = new WeakMap<TaskSnapshot, JsonObject>();
  return (snapshot) => {
    const cached = finished.get(snapshot);
    if (cached !== undefined) return cached;
    const result: JsonObject = { resultType: 'complete', ...toDetailedTask(snapshot) };
    if (isTerminal(snapshot.status)) {
      finished.set(snapshot, memoizeSerialization(result));
    }
    return result;
  };
}

/** The `_meta` of a child task (its parent) or of a parent (its children), as tasks/get shows them. */
async function familyMeta(store: TaskStore, snapshot: TaskSnapshot, owner: TaskOwner): Promise<JsonObject> {
  const meta: JsonObject = {};
  if (snapshot.parentId !== undefined) meta[META_PARENT_TASK] = snapshot.parentId;
  if (snapshot.hasChildren === true && store.family !== undefined) {
    const family = await store.family(snapshot.id, owner);
    meta[META_CHILD_TASKS] = (family?.children ?? []).map((c) => ({
      taskId: c.id,
      tool: c.tool,
      status: c.status,
    }));
  }
  return meta;
}

export function taskMethods(access: TaskAccess): Record<TaskMethod, MethodHandler> {
  const { store, now } = access;
  const getResult = getResults();
  /** What tasks/get answers of the owner's task, or its refusal (thrown). */
  const shown = (
    snapshot: TaskSnapshot | LookupMiss,
    scope: RequestScope,
    id: string,
    owner: TaskOwner,
  ): JsonObject | Promise<JsonObject> => {
    if (typeof snapshot === 'string') throw deny(access, scope, id, snapshot);
    const result = getResult(snapshot);
    if (snapshot.parentId === undefined && snapshot.hasChildren !== true) return result;
    return familyMeta(store, snapshot, owner).then((meta): JsonObject => ({ ...result, _meta: meta }));
  };
  return {
    // Not an async function: the store's read is the only promise waited on (a refusal before it is thrown, and
    // answered as a rejection would be).
    'tasks/get': (params, scope) => {
      requireExtension(scope);
      const id = readId(access, params, scope);
      const at = now();
      const wait = access.pollWait(scope.auth, scope.method, id, at);
      if (wait > 0) {
        throw new ProtocolError(
          TOO_MANY_REQUESTS,
          `Polling too fast: retry after ${Math.ceil(wait / 1000)} s`,
          {
            retryAfterMs: wait,
          },
        );
      }
      const owner = ownerOf(scope.auth);
      // Known at once (a finished task the store remembers): answered without a promise.
      const found = store.getNow === undefined ? store.get(id, owner, at) : store.getNow(id, owner, at);
      if (!(found instanceof Promise)) return shown(found, scope, id, owner);
      return found.then((snapshot) => shown(snapshot, scope, id, owner));
    },
    'tasks/update': async (params, scope) => {
      requireExtension(scope);
      const id = readId(access, params, scope);
      const responses = params.inputResponses;
      if (!isJsonObject(responses)) throw invalidParams('Invalid params: inputResponses must be an object');
      const snapshot = await store.get(id, ownerOf(scope.auth), now());
      if (typeof snapshot === 'string') throw deny(access, scope, id, snapshot);
      // Only outstanding keys count; unknown, answered and superseded keys are ignored.
      await answerInputs(access, scope.auth, scope.method, id, snapshot, responses);
      return { ...ACK };
    },
    'tasks/cancel': async (params, scope) => {
      requireExtension(scope);
      await cancelTask(access, scope.auth, readId(access, params, scope), scope.method);
      return { ...ACK };
    },
  };
}
