// The one PostgreSQL URL of the tests, the reliability suite and the bench (a leaf: no test runner imported here).
export const TEST_POSTGRES_URL =
  process.env.DURABLE_MCP_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
