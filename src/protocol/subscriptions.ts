// subscriptions/listen: a long-lived response stream of list-changed and resource-updated notifications.
import { createOpenLimit } from '../tasks/open-limit.js';
import { isJsonObject, type JsonObject } from '../wire/jsonrpc.js';
import { META_SUBSCRIPTION_ID } from '../wire/meta-keys.js';
import { ErrorCode } from '../wire/codes.js';
import { invalidParams, ProtocolError } from '../wire/protocol-error.js';
import { ownerKey } from '../tasks/task.js';
import type { AuthInfo } from './tool-types.js';
import type { Registry } from './registry.js';
import type { ResourceProvider } from './resource-provider.js';
import type { RequestScope } from './scope.js';

/** An extension's part of a subscription (e.g. task ids); returns what it agreed to and how to stop. */
export interface SubscriptionExtension {
  key: string;
  accept(
    requested: unknown,
    scope: RequestScope,
    send: (method: string, params: JsonObject) => void,
  ): Promise<{ agreed: unknown; start: () => void; stop: () => void } | undefined>;
}

const BOOLEAN_FILTERS = [
  ['toolsListChanged', 'toolsListChanged', 'notifications/tools/list_changed'],
  ['promptsListChanged', 'promptsListChanged', 'notifications/prompts/list_changed'],
  ['resourcesListChanged', 'resourcesListChanged', 'notifications/resources/list_changed'],
] as const;

export async function listen(
  registry: Registry,
  extensions: readonly SubscriptionExtension[],
  shutdown: AbortSignal,
  params: JsonObject,
  scope: RequestScope,
  providers: readonly ResourceProvider[] = [],
): Promise<JsonObject> {
  const filter = params.notifications;
  if (!isJsonObject(filter))
    throw invalidParams('Invalid params: subscriptions/listen requires params.notifications');
  const meta = { [META_SUBSCRIPTION_ID]: scope.id };
  const send = (method: string, p: JsonObject): void => {
    if (!scope.signal.aborted) scope.emit(method, { ...p, _meta: meta });
  };
  const agreed: JsonObject = {};
  const cleanups: (() => void)[] = [];
  const starts: (() => void)[] = [];
  for (const [key, event, method] of BOOLEAN_FILTERS) {
    const value = filter[key];
    if (value === undefined || value === false) continue;
    if (value !== true) throw invalidParams(`Invalid params: notifications.${key} must be a boolean`);
    agreed[key] = true;
    const listener = (): void => send(method, {});
    starts.push(() => registry.events.on(event, listener));
    cleanups.push(() => registry.events.off(event, listener));
  }
  const uris = filter.resourceSubscriptions;
  if (uris !== undefined) {
    if (!Array.isArray(uris) || !uris.every((u) => typeof u === 'string')) {
      throw invalidParams('Invalid params: notifications.resourceSubscriptions must be an array of strings');
    }
  }
  try {
    if (Array.isArray(uris) && uris.length > 0) {
      const resourceUris = await subscribeResources(registry, providers, uris as string[], scope, send);
      agreed.resourceSubscriptions = resourceUris.agreed;
      starts.push(...resourceUris.starts);
      cleanups.push(...resourceUris.cleanups);
    }
    for (const ext of extensions) {
      if (filter[ext.key] === undefined) continue;
      const accepted = await ext.accept(filter[ext.key], scope, send);
      if (accepted === undefined) continue;
      agreed[ext.key] = accepted.agreed;
      starts.push(accepted.start);
      cleanups.push(accepted.stop);
    }
    send('notifications/subscriptions/acknowledged', { notifications: agreed });
    for (const start of starts) start();
  } catch (err) {
    for (const cleanup of cleanups) cleanup();
    throw err;
  }
  // Returned, not awaited: while the stream is open, only the cleanups and the subscription's `_meta` are held.
  return untilClosed(scope.signal, shutdown, cleanups, meta);
}

/** Waits for the stream's end, then stops every part of the subscription and answers with the listen result. */
function untilClosed(
  request: AbortSignal,
  shutdown: AbortSignal,
  cleanups: readonly (() => void)[],
  meta: JsonObject,
): Promise<JsonObject> {
  const stop = (): void => {
    for (const cleanup of cleanups) cleanup();
  };
  return untilAborted(request, shutdown).then(
    () => {
      stop();
      return { resultType: 'complete', _meta: meta };
    },
    (err: unknown) => {
      stop();
      throw err;
    },
  );
}

/**
 * `notifications/resources/updated` for `uris`: those a provider owns through it (only those the caller may read),
 * the others when the registry's resources change (ServerControl.resourceUpdated).
 */
async function subscribeResources(
  registry: Registry,
  providers: readonly ResourceProvider[],
  uris: readonly string[],
  scope: RequestScope,
  send: (method: string, params: JsonObject) => void,
): Promise<{ agreed: string[]; starts: (() => void)[]; cleanups: (() => void)[] }> {
  const wanted = new Set(uris);
  const agreed: string[] = [];
  const starts: (() => void)[] = [];
  const cleanups: (() => void)[] = [];
  const updated = (uri: string): void => send('notifications/resources/updated', { uri });
  for (const provider of providers) {
    const own = [...wanted].filter((uri) => provider.owns(uri));
    if (own.length === 0) continue;
    for (const uri of own) wanted.delete(uri);
    const accepted = await provider.subscribe(own, scope, updated);
    agreed.push(...accepted.agreed);
    starts.push(accepted.start);
    cleanups.push(accepted.stop);
  }
  if (wanted.size > 0) {
    agreed.push(...wanted);
    const listener = (uri: string): void => {
      if (wanted.has(uri)) updated(uri);
    };
    starts.push(() => registry.events.on('resourceUpdated', listener));
    cleanups.push(() => registry.events.off('resourceUpdated', listener));
  }
  return { agreed, starts, cleanups };
}

/**
 * Waits for the request's signal or the server's shutdown. The shutdown signal lives as long as the server and is
 * shared by every open listen: it gets one listener, fanned out (onShutdown), not one per listen.
 */
function untilAborted(request: AbortSignal, shutdown: AbortSignal): Promise<void> {
  if (request.aborted || shutdown.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      request.removeEventListener('abort', done);
      forget();
      resolve();
    };
    const forget = onShutdown(shutdown, done);
    request.addEventListener('abort', done, { once: true });
  });
}

const fanOuts = new WeakMap<AbortSignal, Set<() => void>>();

/** Calls `fn` when the long-lived `signal` aborts, through one listener per signal; returns the way to stop waiting. */
function onShutdown(signal: AbortSignal, fn: () => void): () => void {
  let waiters = fanOuts.get(signal);
  if (waiters === undefined) {
    const all = new Set<() => void>();
    signal.addEventListener('abort', () => [...all].forEach((w) => w()), { once: true });
    fanOuts.set(signal, all);
    waiters = all;
  }
  const set = waiters;
  set.add(fn);
  return () => void set.delete(fn);
}

/** Open listen streams per principal: one caller cannot hold the server's streams (and their lookups) for all. */
export function listenLimit(max: number): { open(auth: AuthInfo): () => void } {
  const limit = createOpenLimit(max);
  return {
    open(auth) {
      const held = limit.open(ownerKey(auth));
      if (!held.ok)
        throw new ProtocolError(ErrorCode.TooManyRequests, `Too many open subscriptions (limit ${max})`, {
          limit: max,
        });
      return held.release;
    },
  };
}
