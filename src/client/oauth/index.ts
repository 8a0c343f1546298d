// Signing in to OAuth-protected MCP servers (the MCP 2026-07-28 authorization flow on oauth4webapi): the session
// factory, the token stores and the contract types.
export { createOAuth } from './session.js';
export { createMemoryTokenStore } from './memory-store.js';
export { createFileTokenStore } from './file-store.js';
export * from './types.js';
