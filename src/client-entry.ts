/**
 * Public entry of `durable-mcp/client`: the client library. It loads no native addon; the SQLite journal is
 * `durable-mcp/journal`.
 *
 * @module durable-mcp/client
 */
export * from './client/index.js';
