// One legacy request in flight: its session, the caller, and the response stream it may write to.
import type { AuthInfo } from '../protocol/tool-types.js';
import type { McpServer } from '../protocol/server.js';
import type { TaskStore } from '../tasks/store.js';
import type { HeaderLookup } from '../wire/headers.js';
import type { JsonObject, RequestId } from '../wire/jsonrpc.js';
import type { LegacySession, SessionRegistry } from './sessions.js';

/** What every legacy request shares: the core, the sessions, the task store and the waiting limits. */
export interface LegacyContext {
  server: McpServer;
  sessions: SessionRegistry;
  /** The task store, for tasks/list and for waking tasks/result on changes (absent: no listing, polling). */
  store: TaskStore | undefined;
  now: () => number;
  /** Tells this process's GET streams of the session that its resource subscriptions changed. */
  subscriptionsChanged(session: LegacySession): void;
  /**
   * How long one response stream of tasks/result waits for a terminal state: then it closes for the client to
   * resume (or, for a client that takes no event stream, tells it to call again).
   */
  resultWaitMs: number;
  /** How long tasks/cancel waits for a running task to settle before answering with its status. */
  cancelWaitMs: number;
  pageSize: number;
}

export interface LegacyCall {
  ctx: LegacyContext;
  server: McpServer;
  session: LegacySession;
  id: RequestId;
  method: string;
  params: JsonObject;
  auth: AuthInfo;
  signal: AbortSignal;
  /**
   * The request's routing headers (Mcp-Method, Mcp-Name, Mcp-Param-*) when it sent any: the core then checks them
   * against the body exactly as on the modern wire. Undefined for a client that sends none.
   */
  routing?: HeaderLookup;
  /** Sends a notification on this request's response stream (turning it into SSE). */
  emit(method: string, params: JsonObject): void;
  /** Sends a server→client request on this request's response stream and waits for the answer. */
  ask(method: string, params: JsonObject): Promise<JsonObject>;
  /** Sends a server→client request whose answer is routed by its id alone (see task-input.ts). */
  sendRequest(id: string, method: string, params: JsonObject): void;
  /**
   * Waits for news of a request sent with sendRequest that the exchange carrying its answer reports (a refused
   * answer), on any replica: the message, or undefined once the signal aborts.
   */
  follow(id: string, signal: AbortSignal): Promise<JsonObject | undefined>;
  /**
   * The response as a resumable event stream (see result-resume.ts), when the client takes one: `mark` sends an
   * event id to resume from; `asked` lists the input keys asked on the streams this wait resumes.
   */
  resumable?: { mark(eventId: string): void; readonly asked: readonly string[] };
}
