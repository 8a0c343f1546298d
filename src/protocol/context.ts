// What a tool, prompt or resource handler sees of the request it serves.
import type { StepAttempt, StepOptions } from '../tasks/execution.js';
import type { RequestEnvelope } from '../wire/envelope.js';
import type { RequestId } from '../wire/jsonrpc.js';
import type { LogLevel } from '../wire/meta-keys.js';
import type { PromptDefinition, ToolDefinition } from './define.js';
import type { InputRequest, InputRequests, InputResponse, InputResponses, JsonValue } from './types.js';

export interface AuthInfo {
  tenant: string;
  principal: string;
}

/** Changes the server's lists at run time; open subscriptions are told. */
export interface ServerControl {
  addTool(tool: ToolDefinition<never>): void;
  removeTool(name: string): boolean;
  addPrompt(prompt: PromptDefinition): void;
  removePrompt(name: string): boolean;
  /** Announces a change of a list without changing it (e.g. when a tool's behaviour changed). */
  listChanged(kind: 'tools' | 'prompts' | 'resources'): void;
  /** Tells subscribers of this resource URI that its contents changed. */
  resourceUpdated(uri: string): void;
}

export interface HandlerContext {
  readonly requestId: RequestId;
  readonly method: string;
  readonly envelope: RequestEnvelope;
  readonly auth: AuthInfo;
  /** Fires when the client goes away (stream closed) or the server shuts down. */
  readonly signal: AbortSignal;
  /**
   * Sends `notifications/progress` if the request carried a progressToken; otherwise does nothing. In a task (which
   * has no progress notifications in this revision) it sets the task's statusMessage instead, e.g. "Copying (3/10)".
   */
  progress(progress: number, total?: number, message?: string): void;
  /** Sends `notifications/message` if the request asked for this level via `_meta…/logLevel`. */
  log(level: LogLevel, data: JsonValue, logger?: string): void;
  /** Returns the client's answer for `key`, or ends this round asking for it (MRTR). */
  input(key: string, request: InputRequest): InputResponse;
  /** Like `input`, for several requests asked at once. */
  inputs(requests: InputRequests): InputResponses;
  /** The state this handler passed to `inputRequired` in the previous round, verified. */
  readonly requestState: JsonValue | undefined;
  /** Set when the handler runs as a durable task. */
  readonly taskId: string | undefined;
  /**
   * Runs `fn` until an attempt succeeds: as a task, its JSON result is then stored and a replay (after input, a
   * crash, on another replica) returns it without running `fn` again. `options.retry` retries failing attempts
   * (as a task the wait between them is durable: the run ends and any process retries on time); `timeoutMs` bounds
   * each attempt. The final error is thrown. Synchronously, attempts and waits happen within the request.
   */
  step<T extends JsonValue>(
    name: string,
    fn: (attempt: StepAttempt) => T | Promise<T>,
    options?: StepOptions,
  ): Promise<T>;
  /**
   * Waits `ms`. As a task the wait is durable: the run ends, no worker is held, the task stays `working` and any
   * process resumes it on time (the wake-up time is kept under `name`, so a replay does not wait again).
   */
  sleep(name: string, ms: number): Promise<void>;
  /** Waits until `at`, like `sleep`. */
  sleepUntil(name: string, at: Date | number): Promise<void>;
  /** Sets the task's statusMessage (no effect outside a task). */
  status(message: string): Promise<void>;
  /** The server's registry, for tools that change what the server offers. */
  readonly server: ServerControl;
  /** Ends this round with an InputRequiredResult carrying these requests and state. */
  inputRequired(options: { inputRequests?: InputRequests; state?: JsonValue }): never;
}
