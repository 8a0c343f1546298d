// The HandlerContext for one synchronous round of a tool, prompt or resource (a class: no closures per request).
import { LOG_LEVELS, type LogLevel } from '../wire/meta-keys.js';
import type { RequestEnvelope } from '../wire/envelope.js';
import type { RequestId } from '../wire/jsonrpc.js';
import type { AuthInfo, HandlerContext, ServerControl, StreamWriter } from './tool-types.js';
import { inlineStreamWriter } from './stream-writer.js';
import {
  checkedMs,
  checkedProgress,
  checkedStatus,
  checkedTime,
  mergeStepOptions,
  useStepName,
  type StepAttempt,
  type StepOptions,
} from '../tasks/execution.js';
import { DEFAULT_TASK_LIMITS, tooManyMapItems } from '../tasks/limits.js';
import { mapSteps, type MapOptions } from '../tasks/step-map.js';
import type { StepDefaults, ToolInputMethod } from './define.js';
import { checkDeclared } from './tool-asks.js';
import { runStepInline, sleepInline, type TakeStepSlot } from './inline-steps.js';
import { checkAnswer } from './input-answers.js';
import { InputPending, type MrtrRound } from './mrtr.js';
import type { RequestScope } from './scope.js';
import type { CallToolResult, InputRequest, InputRequests, InputResponses, JsonValue } from './types.js';

const severity = (level: LogLevel): number => LOG_LEVELS.indexOf(level);

class RoundContext implements HandlerContext {
  readonly taskId = undefined;
  /** Step and sleep names used in this round: each once, as in a task. */
  private names: Set<string> | undefined;

  constructor(
    private readonly scope: RequestScope,
    private readonly round: MrtrRound,
    readonly server: ServerControl,
    private readonly steps: StepDefaults | undefined,
    private readonly asks: readonly ToolInputMethod[] | undefined,
    private readonly maxStepBytes: number | undefined,
    private readonly takeStepSlot: TakeStepSlot | undefined,
  ) {}

  get requestId(): RequestId {
    return this.scope.id;
  }
  get method(): string {
    return this.scope.method;
  }
  get envelope(): RequestEnvelope {
    return this.scope.envelope;
  }
  get auth(): AuthInfo {
    return this.scope.auth;
  }
  get signal(): AbortSignal {
    return this.scope.signal;
  }
  get requestState(): JsonValue | undefined {
    return this.round.state;
  }

  async step<T extends JsonValue | void>(
    name: string,
    fn: (attempt: StepAttempt) => T | Promise<T>,
    options?: StepOptions,
  ): Promise<T> {
    useStepName((this.names ??= new Set()), name);
    return runStepInline(
      name,
      fn,
      mergeStepOptions(this.steps, options),
      this.scope.signal,
      this.maxStepBytes,
      this.takeStepSlot,
    );
  }

  /** Within a request nothing is kept: every item runs, counted against the default bound on a task's steps. */
  async map<I extends JsonValue, T extends JsonValue | void>(
    name: string,
    items: readonly I[],
    fn: (item: I, index: number, attempt: StepAttempt) => T | Promise<T>,
    options?: MapOptions,
  ): Promise<T[]> {
    const plan = (what: string, names: readonly string[]): readonly boolean[] => {
      const { maxStepsPerTask } = DEFAULT_TASK_LIMITS;
      const used = this.names?.size ?? 0;
      if (used + names.length > maxStepsPerTask)
        throw tooManyMapItems(what, names.length, maxStepsPerTask - used, maxStepsPerTask);
      return names.map(() => false);
    };
    return mapSteps({ step: (n, f, o) => this.step(n, f, o), plan }, name, items, fn, options);
  }

  async sleep(name: string, ms: number): Promise<void> {
    useStepName((this.names ??= new Set()), name);
    return sleepInline(checkedMs(name, ms, Date.now()), this.scope.signal);
  }

  async sleepUntil(name: string, at: Date | number): Promise<void> {
    useStepName((this.names ??= new Set()), name);
    return sleepInline(checkedTime(name, at) - Date.now(), this.scope.signal);
  }

  /** No task to show it on; checked all the same, so that a tool behaves alike with and without a task. */
  async status(message: string): Promise<void> {
    checkedStatus(message);
  }

  /** No task to keep the chunks: appends are checked and go nowhere. */
  stream(name: string): StreamWriter {
    return inlineStreamWriter(name);
  }

  /** No history to keep to: always the new path. */
  async patched(): Promise<boolean> {
    return true;
  }

  progress(progress: number, total?: number, message?: string): void {
    checkedProgress(progress, total, message);
    const token = this.scope.envelope.progressToken;
    if (token === undefined || this.scope.signal.aborted) return;
    const params: Record<string, unknown> = { progressToken: token, progress };
    if (total !== undefined) params.total = total;
    if (message !== undefined) params.message = message;
    this.scope.emit('notifications/progress', params);
  }

  log(level: LogLevel, data: JsonValue, logger?: string): void {
    const wanted = this.scope.envelope.logLevel;
    if (wanted === undefined || this.scope.signal.aborted) return;
    if (severity(level) < severity(wanted)) return;
    const params: Record<string, unknown> = { level, data };
    if (logger !== undefined) params.logger = logger;
    this.scope.emit('notifications/message', params);
  }

  input(key: string, request: InputRequest): InputResponses[string] {
    return this.inputs({ [key]: request })[key] as InputResponses[string];
  }

  inputs(requests: InputRequests): InputResponses {
    checkDeclared(this.asks, requests);
    const missing: InputRequests = {};
    const found: InputResponses = {};
    let pending = false;
    for (const key in requests) {
      let answer = Object.hasOwn(this.round.answers, key) ? this.round.answers[key] : undefined;
      if (answer !== undefined && !checkAnswer(requests[key], answer).ok) {
        // Not an answer to this question (sent before it was asked, or to another one): asked again.
        delete this.round.answers[key];
        answer = undefined;
      }
      if (answer === undefined) {
        missing[key] = requests[key] as InputRequest;
        pending = true;
      } else found[key] = answer;
    }
    if (pending) throw new InputPending(missing, this.round.state);
    return found;
  }

  /** A call within its request has no task for a child task to belong to. */
  async callTool(): Promise<CallToolResult> {
    throw new TypeError('ctx.callTool is only for tasks: a call that runs within its request has no task');
  }

  /** A round answered within its request has no task to wait in. */
  async waitForInput(): Promise<InputResponses> {
    throw new TypeError('ctx.waitForInput is only for tasks: use ctx.input outside a task');
  }

  /** A round answered within its request has no task to deliver events to. */
  async waitForEvent(): Promise<never> {
    throw new TypeError('ctx.waitForEvent is only for tasks: call the tool as a task');
  }

  callbackUrl(): never {
    throw new TypeError('ctx.callbackUrl is only for tasks: call the tool as a task');
  }

  inputRequired(options: { inputRequests?: InputRequests; state?: JsonValue }): never {
    checkDeclared(this.asks, options.inputRequests ?? {});
    throw new InputPending(options.inputRequests ?? {}, options.state);
  }
}

/**
 * `steps`: the step defaults (server's, then the tool's) of the handler, if it is a tool's; `asks`: the input its
 * tool declares it asks for (ToolDefinition.asks), if it does; `maxStepBytes`: the largest value a step may return
 * (the bound a task's steps have, so that a tool behaves alike with and without a task); `takeStepSlot`: the slots of
 * steps with a concurrency limit (none: they run uncounted).
 */
export function createHandlerContext(
  scope: RequestScope,
  round: MrtrRound,
  control: ServerControl,
  steps?: StepDefaults,
  asks?: readonly ToolInputMethod[],
  maxStepBytes?: number,
  takeStepSlot?: TakeStepSlot,
): HandlerContext {
  return new RoundContext(scope, round, control, steps, asks, maxStepBytes, takeStepSlot);
}
