// subscriptions/listen: a long-lived response stream of list-changed and resource-updated notifications.
import { isJsonObject, type JsonObject, type RequestId } from '../wire/jsonrpc.js';
import { META_SUBSCRIPTION_ID } from '../wire/meta-keys.js';
import { ErrorCode } from '../wire/codes.js';
import { invalidParams, ProtocolError } from '../wire/protocol-error.js';
import { ownerKey } from '../tasks/task.js';
import type { AuthInfo } from './tool-types.js';
import type { Registry } from './registry.js';
import type { ResourceProvider } from './resource-provider.js';
import type { RequestScope, ResponseStream } from './scope.js';
import { onAbort } from './on-abort.js';

/** One part of an open subscription: started once it is acknowledged, stopped at its end (called as methods). */
export interface SubscriptionPart {
  start(): void;
  stop(): void;
}

/** An extension's part of a subscription (e.g. task ids); returns what it agreed to and how to start and stop. */
export interface SubscriptionExtension {
  key: string;
  accept(
    requested: unknown,
    scope: RequestScope,
    send: (method: string, params: JsonObject) => void,
  ): Promise<({ agreed: unknown } & SubscriptionPart) | undefined>;
}

const BOOLEAN_FILTERS = [
  ['toolsListChanged', 'toolsListChanged', 'notifications/tools/list_changed'],
  ['promptsListChanged', 'promptsListChanged', 'notifications/prompts/list_changed'],
  ['resourcesListChanged', 'resourcesListChanged', 'notifications/resources/list_changed'],
] as const;

/**
 * Opens a subscription: the acknowledgement goes out once every part agreed, then its notifications. The promise
 * answers with the listen result when the stream ends. The caller's slot in `slots` is held from now until the
 * subscription stops or is refused (a caller who holds every slot already is refused with 429 at once). Not an async
 * function: while the stream is open, its OpenListen (and what its parts hold) is all that is kept, with no promise of
 * the set-up waiting on it, nor the request's scope.
 */
export function listen(
  registry: Registry,
  extensions: readonly SubscriptionExtension[],
  shutdown: AbortSignal,
  params: JsonObject,
  scope: RequestScope,
  providers: readonly ResourceProvider[],
  slots: ListenSlots,
): Promise<JsonObject> {
  const slot = slots.open(scope.auth);
  const filter = params.notifications;
  if (!isJsonObject(filter)) {
    slots.close(slot);
    return Promise.reject(
      invalidParams('Invalid params: subscriptions/listen requires params.notifications'),
    );
  }
  const open = new OpenListen(scope.stream ?? streamOf(scope), scope.id, shutdown, slots, slot);
  const result = open.result();
  setUp(open, registry, extensions, filter, scope, providers).then(
    () => open.opened(),
    (err: unknown) => open.fail(err),
  );
  return result;
}

/** A scope without a stream of its own is its own stream (waiting on its signal when it cannot tell otherwise). */
const streamOf = (scope: RequestScope): ResponseStream => ({
  emit: (method, params) => scope.emit(method, params),
  whenWritable: () => scope.whenWritable(),
  onGone: (fn) => (scope.onGone === undefined ? onAbort(scope.signal, fn) : scope.onGone(fn)),
});

/** Sets up every part the filter asks for and sends the acknowledgement; throws when one is refused. */
async function setUp(
  open: OpenListen,
  registry: Registry,
  extensions: readonly SubscriptionExtension[],
  filter: JsonObject,
  scope: RequestScope,
  providers: readonly ResourceProvider[],
): Promise<void> {
  // Bound, not a closure of this frame: a part that keeps it keeps nothing else of the set-up.
  const send = open.send.bind(open);
  const agreed: JsonObject = {};
  const parts = open.parts;
  for (const [key, event, method] of BOOLEAN_FILTERS) {
    const value = filter[key];
    if (value === undefined || value === false) continue;
    if (value !== true) throw invalidParams(`Invalid params: notifications.${key} must be a boolean`);
    agreed[key] = true;
    const listener = (): void => send(method, {});
    parts.push({
      start: () => registry.events.on(event, listener),
      stop: () => registry.events.off(event, listener),
    });
  }
  const uris = filter.resourceSubscriptions;
  if (uris !== undefined) {
    if (!Array.isArray(uris) || !uris.every((u) => typeof u === 'string')) {
      throw invalidParams('Invalid params: notifications.resourceSubscriptions must be an array of strings');
    }
  }
  if (Array.isArray(uris) && uris.length > 0) {
    const resourceUris = await subscribeResources(registry, providers, uris as string[], scope, send);
    agreed.resourceSubscriptions = resourceUris.agreed;
    parts.push(...resourceUris.parts);
  }
  for (const ext of extensions) {
    if (filter[ext.key] === undefined) continue;
    const accepted = await ext.accept(filter[ext.key], scope, send);
    if (accepted === undefined) continue;
    agreed[ext.key] = accepted.agreed;
    parts.push(accepted);
  }
  send('notifications/subscriptions/acknowledged', { notifications: agreed });
  for (const part of parts) part.start();
}

/** The `_meta` of a subscription's notifications and result: its id (the listen request's). */
const metaOf = (id: RequestId): JsonObject => ({ [META_SUBSCRIPTION_ID]: id });

/**
 * One open subscription: its stream, the ways to stop its parts, and its end (the client went away or the server
 * shuts down). One object with its methods on the prototype, not a set of closures per open stream; it keeps the
 * request's stream and id, not its scope (envelope, capabilities, headers).
 */
class OpenListen {
  /** The parts of the subscription, stopped once at its end (or when it is refused while being set up). */
  parts: SubscriptionPart[] = [];
  /** The client went away or the server shuts down (perhaps while it was being set up). */
  private ended = false;
  /** Every part is set up and started. */
  private open = false;
  private resolve: ((result: JsonObject) => void) | undefined;
  private reject: ((err: unknown) => void) | undefined;
  private stopGone: (() => void) | undefined;
  /** The caller's slot in `slots`, given back once (at the subscription's end or refusal). */
  private slot: ListenSlot | undefined;

  constructor(
    private readonly stream: ResponseStream,
    private readonly id: RequestId,
    private readonly shutdown: AbortSignal,
    private readonly slots: ListenSlots,
    slot: ListenSlot,
  ) {
    this.slot = slot;
    const stopGone = stream.onGone(this.end.bind(this));
    if (this.ended) return;
    this.stopGone = stopGone;
    if (shutdown.aborted) this.end();
    else shutdownWaiters(shutdown).add(this);
  }

  /** A notification on the stream, with the subscription's `_meta`; nothing once it ended. */
  send(method: string, p: JsonObject): void {
    if (!this.ended) this.stream.emit(method, { ...p, _meta: metaOf(this.id) });
  }

  /** The listen result once the stream ends (called once, before it is set up). */
  result(): Promise<JsonObject> {
    return new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }

  /** Every part is set up and started: the stream stays open until its end (at once when it already came). */
  opened(): void {
    this.open = true;
    this.reject = undefined;
    // Just the parts: the array they were pushed onto has room for many more.
    this.parts = this.parts.slice();
    if (this.ended) this.finish();
  }

  /** The client went away or the server shuts down: every part stops, the listen answers. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.forget();
    if (this.open) this.finish();
  }

  /** The subscription was refused while being set up: what was set up so far stops, the listen fails. */
  fail(err: unknown): void {
    const reject = this.reject;
    this.ended = true;
    this.forget();
    this.stop();
    this.resolve = undefined;
    this.reject = undefined;
    reject?.(err);
  }

  private finish(): void {
    const resolve = this.resolve;
    this.stop();
    this.resolve = undefined;
    resolve?.({ resultType: 'complete', _meta: metaOf(this.id) });
  }

  private forget(): void {
    this.stopGone?.();
    this.stopGone = undefined;
    fanOuts.get(this.shutdown)?.delete(this);
  }

  /** Stops every part, and gives the caller's slot back once. */
  private stop(): void {
    for (const part of this.parts) part.stop();
    this.parts.length = 0;
    const slot = this.slot;
    this.slot = undefined;
    if (slot !== undefined) this.slots.close(slot);
  }
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
): Promise<{ agreed: string[]; parts: SubscriptionPart[] }> {
  const wanted = new Set(uris);
  const agreed: string[] = [];
  const parts: SubscriptionPart[] = [];
  const updated = (uri: string): void => send('notifications/resources/updated', { uri });
  for (const provider of providers) {
    const own = [...wanted].filter((uri) => provider.owns(uri));
    if (own.length === 0) continue;
    for (const uri of own) wanted.delete(uri);
    const accepted = await provider.subscribe(own, scope, updated);
    agreed.push(...accepted.agreed);
    parts.push(accepted);
  }
  if (wanted.size > 0) {
    agreed.push(...wanted);
    const listener = (uri: string): void => {
      if (wanted.has(uri)) updated(uri);
    };
    parts.push({
      start: () => registry.events.on('resourceUpdated', listener),
      stop: () => registry.events.off('resourceUpdated', listener),
    });
  }
  return { agreed, parts };
}

const fanOuts = new WeakMap<AbortSignal, Set<OpenListen>>();

/**
 * The open listens that end with the server's shutdown. That signal lives as long as the server and is shared by
 * every open listen: it gets one listener, fanned out, not one per listen.
 */
function shutdownWaiters(signal: AbortSignal): Set<OpenListen> {
  let waiters = fanOuts.get(signal);
  if (waiters === undefined) {
    const all = new Set<OpenListen>();
    signal.addEventListener('abort', () => [...all].forEach((w) => w.end()), { once: true });
    fanOuts.set(signal, all);
    waiters = all;
  }
  return waiters;
}

/** One principal's open listen streams: one object shared by all of them. */
export interface ListenSlot {
  readonly key: string;
  open: number;
}

/**
 * Open listen streams per principal: one caller cannot hold the server's streams (and their lookups) for all. Each
 * open and close is told to `onChange` (+1, -1).
 */
export class ListenSlots {
  private readonly held = new Map<string, ListenSlot>();

  constructor(
    private readonly max: number,
    private readonly onChange?: (delta: 1 | -1) => void,
  ) {}

  /** Holds one more stream for the caller: their slot (close it once), or 429 when they hold `max` already. */
  open(auth: AuthInfo): ListenSlot {
    const key = ownerKey(auth);
    const slot = this.held.get(key) ?? { key, open: 0 };
    if (slot.open >= this.max)
      throw new ProtocolError(ErrorCode.TooManyRequests, `Too many open subscriptions (limit ${this.max})`, {
        limit: this.max,
      });
    if (slot.open === 0) this.held.set(key, slot);
    slot.open += 1;
    this.onChange?.(1);
    return slot;
  }

  /** One stream of the slot's principal closed. */
  close(slot: ListenSlot): void {
    slot.open -= 1;
    if (slot.open === 0) this.held.delete(slot.key);
    this.onChange?.(-1);
  }
}
