// Test projects: `npx vitest run --project unit` (src/, examples/ and bench/, fast, no network but 127.0.0.1), `e2e`
// (whole servers and CLI processes), `postgres` (needs the PostgreSQL of DURABLE_MCP_TEST_POSTGRES_URL; skipped
// with a reason when it is unreachable, failing instead with CI=true). `npm test` runs them all.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/** The package's own name, as the examples import it, means its sources here (tsconfig.json "paths" too). */
const ENTRIES: Record<string, string> = {
  'durable-mcp': 'src/index.ts',
  'durable-mcp/client': 'src/client-entry.ts',
  'durable-mcp/journal': 'src/journal.ts',
  'durable-mcp/sqlite': 'src/sqlite.ts',
  'durable-mcp/postgres': 'src/postgres.ts',
  'durable-mcp/advanced': 'src/advanced.ts',
  'durable-mcp/testing': 'src/testing.ts',
  'durable-mcp/testing/contract': 'src/testing-contract.ts',
};
const alias = Object.entries(ENTRIES).map(([name, file]) => ({
  find: new RegExp(`^${name.replace('/', '\\/')}$`),
  replacement: fileURLToPath(new URL(file, import.meta.url)),
}));

const POSTGRES = ['src/stores/postgres/**/*.test.ts', 'test/e2e/*replicas*.test.ts'];

export default defineConfig({
  resolve: { alias },
  test: {
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['src/**/*.test.ts', 'examples/**/*.test.ts', 'bench/**/*.test.ts'],
          exclude: POSTGRES,
        },
      },
      { extends: true, test: { name: 'e2e', include: ['test/**/*.test.ts'], exclude: POSTGRES } },
      { extends: true, test: { name: 'postgres', include: POSTGRES } },
    ],
  },
});
