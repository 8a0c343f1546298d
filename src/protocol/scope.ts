// One request as seen by a method handler: its envelope, caller, cancellation and response stream.
import type { RequestEnvelope } from '../wire/envelope.js';
import type { HeaderLookup } from '../wire/headers.js';
import type { IncomingRequest, JsonObject, RequestId } from '../wire/jsonrpc.js';
import type { AuthInfo } from './tool-types.js';
import { onAbort } from './on-abort.js';

/**
 * What a long-lived response (a subscription's stream) needs of its request once it is set up: the stream alone,
 * without the request's envelope, params or headers.
 */
export interface ResponseStream {
  /** Sends a notification on the response stream. */
  emit(method: string, params: JsonObject): void;
  /** Resolves once the stream can take more (back-pressure); at once when it is not congested. */
  whenWritable(): Promise<void>;
  /** Calls `fn` once when the client goes away (at once when it already has); returns the way to stop waiting. */
  onGone(fn: () => void): () => void;
}

export interface RequestScope {
  id: RequestId;
  method: string;
  envelope: RequestEnvelope;
  auth: AuthInfo;
  signal: AbortSignal;
  /** Request headers (lower-case names); undefined on stdio. */
  header: HeaderLookup | undefined;
  /** Sends a notification on this request's response stream (switching an HTTP response to SSE). */
  emit(method: string, params: JsonObject): void;
  /** Resolves once the response stream can take more (back-pressure); at once when it is not congested. */
  whenWritable(): Promise<void>;
  /**
   * Calls `fn` once when the client goes away (at once when it already has); returns the way to stop waiting. For a
   * long-lived waiter it holds less than a listener on `signal`. Absent: wait on `signal`.
   */
  onGone?(fn: () => void): () => void;
  /**
   * This request's response stream alone, for what outlives the handler's set-up: it keeps less than the scope.
   * Absent: keep the scope.
   */
  readonly stream?: ResponseStream;
}

export type MethodHandler = (params: JsonObject, scope: RequestScope) => Promise<JsonObject> | JsonObject;

/** What a scope reads of its dispatch input (a `DispatchInput` has all of it). */
interface ScopeInput {
  auth: AuthInfo;
  readonly signal: AbortSignal;
  header: HeaderLookup | undefined;
  emit(method: string, params: JsonObject): void;
  whenWritable?: () => Promise<void>;
  onGone?: (fn: () => void) => () => void;
}

/**
 * What a method handler sees of its request. A class rather than an object literal: a literal with a getter gets
 * a hidden class of its own on every request, allocated where only full collections free it.
 */
export class Scope implements RequestScope {
  readonly id: RequestId;
  readonly method: string;
  readonly auth: AuthInfo;
  readonly header: HeaderLookup | undefined;

  constructor(
    request: IncomingRequest,
    readonly envelope: RequestEnvelope,
    private readonly input: ScopeInput,
  ) {
    this.id = request.id;
    this.method = request.method;
    this.auth = input.auth;
    this.header = input.header;
  }

  get signal(): AbortSignal {
    return this.input.signal;
  }

  emit(method: string, params: JsonObject): void {
    this.input.emit(method, params);
  }

  whenWritable(): Promise<void> {
    return this.input.whenWritable === undefined ? Promise.resolve() : this.input.whenWritable();
  }

  onGone(fn: () => void): () => void {
    return this.input.onGone === undefined ? onAbort(this.input.signal, fn) : this.input.onGone(fn);
  }

  /** The input itself when it has all of a stream (no envelope kept with it), else this scope. */
  get stream(): ResponseStream {
    return isStream(this.input) ? this.input : this;
  }
}

const isStream = (input: ScopeInput): input is ScopeInput & ResponseStream =>
  input.whenWritable !== undefined && input.onGone !== undefined;
