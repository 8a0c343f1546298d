/**
 * Public entry of `durable-mcp`: define tools, open a backend, serve them over HTTP or stdio. Building blocks for
 * other assemblies (the bare server core, the worker, store internals) are in `durable-mcp/advanced`.
 *
 * @module durable-mcp
 */
export {
  defineTool,
  definePrompt,
  defineResource,
  defineResourceTemplate,
  defineToolSet,
} from './protocol/define.js';
export type {
  ToolDefinition,
  PromptDefinition,
  ResourceDefinition,
  ResourceTemplateDefinition,
  ToolSet,
  TaskPolicy,
  StepDefaults,
} from './protocol/define.js';
export type {
  ToolAnnotations,
  PromptArgument,
  Completer,
  ToolInputMethod,
  TaskConcurrency,
  TaskRateLimit,
  TaskDebounce,
  HandlerContext,
  AuthInfo,
  ServerControl,
  StreamWriter,
  CallToolOptions,
} from './protocol/tool-types.js';
export type { RequestEnvelope, ClientCapabilities, Implementation } from './wire/envelope.js';
export { text, textResult } from './protocol/types.js';
export type * from './protocol/types.js';

// Steps, retries, waits and errors inside a tool.
export { NonRetryableError, DEFAULT_RETRY_POLICY } from './tasks/retry.js';
export type { RetryPolicy, ResolvedRetryPolicy } from './tasks/retry.js';
export { StepTimeoutError } from './tasks/execution.js';
export { TaskLimitError, DEFAULT_TASK_LIMITS } from './tasks/limits.js';
export type { TaskBound, TaskLimits } from './tasks/limits.js';
export type { EventResult, StepAttempt, StepConcurrency, StepOptions } from './tasks/execution.js';
export type { MapOptions } from './tasks/step-map.js';
export type {
  EventDelivery,
  EventDeliveryResult,
  EventSender,
  EventWaitState,
  OutsideEventPort,
} from './tasks/events.js';
export type { CallbackCheck, CallbackTokens } from './tasks/callback-tokens.js';
export type { EventRouteOptions } from './events/routes.js';
export { DebounceConflictError, IdempotencyConflictError } from './tasks/errors.js';
export { ChildTaskFailedError, ChildTaskRefusedError } from './protocol/tasks/child-tasks.js';
export type { ChildTaskStatus } from './protocol/tasks/child-tasks.js';
export { ProtocolError } from './wire/protocol-error.js';
export { ErrorCode } from './wire/codes.js';
export { META_IDEMPOTENCY_KEY, META_ERROR_REF, META_BACKGROUND_TASK } from './wire/meta-keys.js';

// A durable server in one call: `createDurableMcp({ toolSets, backend: createSqliteBackend() }).listen()`.
export { createDurableMcp, allowedHostsFor } from './runtime.js';
export type { DurableMcp, DurableMcpOptions, ListenOptions } from './runtime.js';
export { createSqliteBackend, DEFAULT_SQLITE_PATH } from './stores/sqlite/backend.js';
export type { SqliteBackendOptions } from './stores/sqlite/backend.js';
export type { Backend, BackendOptions } from './tasks/backend.js';
export type { TasksExtensionOptions } from './protocol/tasks/extension.js';
export { DEFAULT_FALLBACK_BUDGET_MS, type FallbackOptions } from './protocol/tasks/fallback.js';
export type { WorkerOptions, Worker } from './worker/worker.js';
export type { McpServer, ServerOptions, ServerInfo } from './protocol/server.js';
export { systemClock } from './tasks/clock.js';
export type { Clock } from './tasks/clock.js';
export type {
  ToolErrorReport,
  TaskObserver,
  RunInfo,
  StepInfo,
  StepEnd,
  WaitInfo,
  WaitKind,
  WaitEnd,
} from './tasks/observer.js';
export type { TraceContext } from './tasks/trace-context.js';
export type {
  TaskSnapshot,
  TaskStatus,
  TaskOwner,
  TaskFailure,
  StepFailure,
  TaskProgress,
  TaskError,
} from './tasks/task.js';
export type { ChildTaskRef } from './tasks/inspection.js';
export type { ClaimScope, OutOfScopeTasks, TaskFamily, TaskStore } from './tasks/store.js';
export type { PayloadCipher } from './tasks/payload-cipher.js';
export type { AuditEvent, AuditEventName, AuditLog } from './protocol/audit.js';

// Serving: HTTP (with its own node:http server or inside yours) and stdio; who the caller is.
export { createHttpHandler } from './http.js';
export type { HttpHandlerOptions } from './http.js';
export type { AdminApiOptions } from './admin/api.js';
export type { HttpHandler } from './transport/http/handler.js';
export type { HeaderLookup } from './wire/headers.js';
export type { ResponseReport } from './transport/http/reply.js';
export type { LegacyOptions } from './legacy/wire.js';
export { listenHttp } from './transport/http/node-server.js';
export type {
  RunningHttpServer,
  BoundAddress,
  HandlerFactory,
  ListenHttpOptions,
} from './transport/http/node-server.js';
export { LOOPBACK_HOSTS } from './transport/http/origin-check.js';
export type { OriginPolicy, OriginRefusal } from './transport/http/origin-check.js';
export { serveStdio } from './transport/stdio/stdio.js';
export type { StdioOptions } from './transport/stdio/stdio.js';
export { createAnonymousAuthenticator } from './auth/authenticator.js';
export type { Authenticator, AuthOutcome, AnonymousAuthOptions } from './auth/authenticator.js';
export type { AdminScope } from './tasks/admin.js';
export { createStaticTokenAuthenticator } from './auth/static-tokens.js';
export type { StaticTokenAuthenticator } from './auth/static-tokens.js';
export { createJwtAuthenticator, protectedResourceMetadata } from './auth/jwt.js';
export type { JwtAuthOptions, JwtOperatorOptions } from './auth/jwt.js';
export { VERSION } from './version.js';

// The types of a custom wire (the HTTP handler's `wires`) moved to `durable-mcp/advanced`; these names stay here for
// one minor release (docs/api-changes.md).
export type * from './deprecated.js';
