// Public entry of `durable-mcp`: define tools, build a server, serve it over HTTP or stdio.
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
export { NonRetryableError, DEFAULT_RETRY_POLICY } from './tasks/retry.js';
export type { RetryPolicy } from './tasks/retry.js';
export { StepTimeoutError } from './tasks/execution.js';
export type { StepAttempt, StepOptions } from './tasks/execution.js';
export { IdempotencyConflictError } from './tasks/errors.js';
export { systemClock } from './tasks/clock.js';
export type { Clock } from './tasks/clock.js';
export type { ToolErrorReport, TaskObserver } from './tasks/observer.js';
export { META_IDEMPOTENCY_KEY, META_ERROR_REF, META_BACKGROUND_TASK } from './wire/meta-keys.js';
export type { HandlerContext, AuthInfo } from './protocol/context.js';
export { text, textResult } from './protocol/types.js';
export type * from './protocol/types.js';
export { createMcpServer } from './protocol/server.js';
export type { McpServer, ServerOptions, ServerExtension, ServerInfo } from './protocol/server.js';
export { createHttpHandler } from './transport/http/handler.js';
export { listenHttp } from './transport/http/node-server.js';
export { LOOPBACK_HOSTS } from './transport/http/origin-check.js';
export { serveStdio } from './transport/stdio/stdio.js';
export { createAnonymousAuthenticator } from './auth/authenticator.js';
export type { Authenticator } from './auth/authenticator.js';
export { ProtocolError } from './wire/protocol-error.js';
export { ErrorCode } from './wire/codes.js';
export { openSqlite } from './stores/sqlite/database.js';
export { createSqliteTaskStore } from './stores/sqlite/task-store.js';
export type { SqliteTaskStoreOptions } from './stores/sqlite/task-store.js';
export { createDurableMcp } from './runtime.js';
export type { DurableMcp, DurableMcpOptions } from './runtime.js';
export { createWorker } from './worker/worker.js';
export type { Worker, WorkerOptions } from './worker/worker.js';
export type { TaskStore, ChangeFeed, TaskChange, CommittedTask, TaskPage } from './tasks/store.js';
export type { PendingRequestStore, RequestAnswer, SessionRecord, SessionStore } from './tasks/sessions.js';
export type {
  TaskSnapshot,
  TaskStatus,
  TaskOwner,
  TaskFailure,
  StepFailure,
  TaskInspection,
} from './tasks/task.js';
export { createTasksExtension, type TasksExtensionOptions } from './protocol/tasks/extension.js';
export { DEFAULT_FALLBACK_BUDGET_MS, type FallbackOptions } from './protocol/tasks/fallback.js';
export { createTaskRunner } from './protocol/tasks/runner.js';
export { VERSION } from './version.js';
