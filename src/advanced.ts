/**
 * Public entry of `durable-mcp/advanced`: the building blocks `createDurableMcp` assembles, for other assemblies
 * (a server core without tasks, a worker-only process, a store of your own, raw JSON-RPC for tests). These names
 * follow the internals more closely than `durable-mcp` and may change between minor versions. The SQLite and
 * PostgreSQL store types name their drivers' types: type-checking them needs `@types/better-sqlite3` or `@types/pg`.
 *
 * @module durable-mcp/advanced
 */
export { createMcpServer } from './protocol/server.js';
export type {
  CoreServer,
  McpServer,
  ServerOptions,
  ServerExtension,
  ServerInfo,
  ToolsView,
  DispatchInput,
  DispatchOutcome,
} from './protocol/server.js';
export type { Registry, RegisteredTool } from './protocol/registry.js';
export type { TakeStepSlot } from './protocol/inline-steps.js';
export type { RequestScope, ResponseStream, MethodHandler } from './protocol/scope.js';
export type { SubscriptionExtension, SubscriptionPart } from './protocol/subscriptions.js';
export type { ResourceProvider } from './protocol/resource-provider.js';
export type { ToolCall } from './protocol/tools.js';
export type { RoundDeps } from './protocol/run-round.js';
export type { StateSealer } from './protocol/request-state.js';
export type { ArgumentValidator } from './protocol/schema-validation.js';
export type { ParamHeader } from './wire/param-headers.js';
export type { ErrorOrigin } from './wire/codes.js';
export type { ConsumeOnce } from './protocol/one-time.js';
export type {
  RequestId,
  ParseOutcome,
  IncomingMessage,
  IncomingRequest,
  IncomingNotification,
} from './wire/jsonrpc.js';
// A wire of your own on the MCP endpoint (the HTTP handler's `wires`): what it is offered, and how it answers.
export type { HttpWire, WireExchange, WirePost } from './transport/http/wire.js';
export type { HttpReply, ResponseReport } from './transport/http/reply.js';
export type { HeaderLookup } from './wire/headers.js';
export { createTasksExtension } from './protocol/tasks/extension.js';
export type { TasksExtensionOptions } from './protocol/tasks/extension.js';
export { createTaskRunner } from './protocol/tasks/runner.js';
export type { TaskRunnerOptions } from './protocol/tasks/runner.js';
export { childStarter } from './protocol/tasks/child-tasks.js';
export type { ChildTaskDeps, StartChild } from './protocol/tasks/child-tasks.js';
export type { TaskDefaults } from './protocol/tasks/task-start.js';
export type {
  TaskRunner,
  ExecutionContext,
  ChildOutcome,
  ChildStart,
  EventWaitOptions,
} from './tasks/execution.js';
export type { TaskEventOptions } from './protocol/tasks/task-context.js';
export { createCallbackTokens } from './tasks/callback-tokens.js';
export { createWorker } from './worker/worker.js';
export type { Worker, WorkerOptions } from './worker/worker.js';
export { openSqlite } from './stores/sqlite/database.js';
export type { OpenSqliteOptions, SqliteDatabase } from './stores/sqlite/database.js';
export { createSqliteTaskStore } from './stores/sqlite/task-store.js';
export { createPostgresTaskStore } from './stores/postgres/task-store.js';
export type { PostgresTaskStoreOptions } from './stores/postgres/task-store.js';
export { migrate as migratePostgresPool, postgresMigrations } from './stores/postgres/migrations.js';
export type { PostgresMigration } from './stores/postgres/migrations.js';
export type { SqliteTaskStoreOptions } from './stores/sqlite/task-store.js';
export type { BuiltInTaskStore } from './stores/built-in.js';
export type {
  TaskStore,
  ChangeFeed,
  TaskChange,
  CommittedTask,
  TaskPage,
  TaskStats,
  CreationBatches,
  RenewResult,
  SaveStepOptions,
  AnswerResult,
  CancelResult,
  LiveInputPort,
  SlotHolder,
  TaskStreamsPort,
  StreamBounds,
  StreamChunk,
  StreamPage,
  AppendResult,
} from './tasks/store.js';
export type { PendingRequestStore, RequestAnswer, SessionRecord, SessionStore } from './tasks/sessions.js';
export { AdminQueryError } from './tasks/admin.js';
export type {
  TaskAdmin,
  AdminScope,
  AdminTaskQuery,
  AdminTaskFilter,
  AdminTaskPage,
  AdminTaskSummary,
  AdminOverview,
  AdminActionResult,
  AdminRecordedStep,
  AdminRetryResult,
  AdminPayload,
  AdminTaskPayloads,
  AdminDispatchState,
  AdminHealthComponent,
  AdminTaskUpstream,
  AdminTaskUpstreamView,
} from './tasks/admin.js';
export { PAUSED_MESSAGE } from './tasks/pauses.js';
export type {
  AdminFlowKey,
  AdminPause,
  AdminPauseResult,
  AdminResumeResult,
  PauseKind,
  PauseTarget,
} from './tasks/pauses.js';
export type {
  DoneJson,
  ErrorJson,
  FlowJson,
  FlowKeyJson,
  HealthComponentJson,
  HealthJson,
  OverviewJson,
  PauseJson,
  PausedJson,
  PausesJson,
  ResumedJson,
  RetriedJson,
  SessionJson,
  StepFailureJson,
  TaskDetailJson,
  TaskEventJson,
  TaskFailureJson,
  TaskOutcomeJson,
  TaskPageJson,
  TaskPayloadsJson,
  TaskRowJson,
  TaskStatusJson,
  TaskStepJson,
  TaskUpstreamJson,
} from './admin/shapes.js';
export type {
  TaskSnapshot,
  TaskStatus,
  TaskOutcome,
  TaskOwner,
  TaskFailure,
  StepFailure,
  TaskHead,
  TaskStatusChange,
  TaskError,
  NewTask,
  ConcurrencyLimit,
  RateLimit,
  DebounceKey,
  ClaimedTask,
  RunOutcome,
  LookupMiss,
  StepAttempts,
} from './tasks/task.js';
export type { TaskInspection, InspectedStep } from './tasks/inspection.js';
export { createPayloadCipher, parseKeyring } from './tasks/payload-cipher.js';
export type { PayloadCipher } from './tasks/payload-cipher.js';
export { createHttpClient } from './client/http-client.js';
export type { ClientOptions, HttpRequestOptions, McpHttpClient, RpcReply } from './client/http-client.js';
export type { RetryOptions } from './client/retry.js';
