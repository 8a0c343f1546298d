// Public entry of `durable-mcp/client`.
export { createClient } from './client.js';
export type { CreateClientOptions, McpClient, CallResult, RequestOptions } from './client.js';
export type { ResumedTasks, ResumeFailure, ResumedResult } from './resume.js';
export type { CallOptions } from './call-tool.js';
export { TaskHandle } from './task-handle.js';
export type { FollowStreamOptions, StreamChunk, StreamPage } from './stream-reader.js';
export { newIdempotencyKey } from './idempotency-key.js';
export type { TaskOutcome, InputHandler, FollowOptions, TaskClient, CallDetails } from './task-handle.js';
export { createHttpTransport } from './http-transport.js';
export type { HttpTransportOptions } from './http-transport.js';
export type { RetryOptions } from './retry.js';
export { createStdioTransport, type StdioTransportOptions } from './stdio-transport.js';
export type { ClientTransport, OutgoingRequest, SendOptions, TransportReply } from './transport.js';
export type { Journal, JournalEntry, PendingCall } from './journal.js';
export { InputRequiredError, InvalidResponseError, StreamEndedError } from './errors.js';
export { EventRefusedError, type EventOutcome } from './events.js';
export { ProtocolError } from '../wire/protocol-error.js';
export { ErrorCode } from '../wire/codes.js';
export { encodeHeaderValue } from '../wire/headers.js';
export {
  createOAuth,
  createMemoryTokenStore,
  createFileTokenStore,
  SignInRequiredError,
  OAuthFlowError,
} from './oauth/index.js';
export type {
  ClientAuth,
  OAuthTokenSet,
  TokenEndpointAuthMethod,
  OAuthClientInfo,
  SignInRecord,
  TokenStore,
  AuthorizationRequest,
  DeviceAuthorizationPrompt,
  SignInPrompt,
  ClientCredentialsOptions,
  OAuthOptions,
  OAuthSession,
} from './oauth/index.js';
