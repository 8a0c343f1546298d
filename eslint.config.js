// Lint rules, including the layering: imports may only point the way docs/architecture.md describes.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const layer = (files, forbidden, message) => ({
  files,
  rules: {
    'no-restricted-imports': ['error', { patterns: forbidden.map((group) => ({ group: [group], message })) }],
  },
});

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'data/**', 'bench/results/**', 'conformance-results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        fetch: 'readonly',
        AbortController: 'readonly',
        TextDecoder: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  layer(
    ['src/wire/**/*.ts'],
    [
      '../protocol/*',
      '../tasks/*',
      '../stores/*',
      '../transport/*',
      '../worker/*',
      '../auth/*',
      '../cli/*',
      '../client/*',
      '**/legacy/*',
      'better-sqlite3',
      'pg',
    ],
    'wire/ is pure framing and validation: it imports nothing else of ours.',
  ),
  layer(
    ['src/tasks/**/*.ts'],
    [
      '../wire/*',
      '../protocol/*',
      '../stores/*',
      '../transport/*',
      '../worker/*',
      '../cli/*',
      '**/legacy/*',
      'better-sqlite3',
      'pg',
      'node:http',
    ],
    'tasks/ is the domain: no wire, HTTP, SQL or drivers.',
  ),
  layer(
    ['src/protocol/**/*.ts'],
    [
      '../stores/*',
      '../transport/*',
      '../worker/*',
      '../cli/*',
      '../client/*',
      '**/legacy/*',
      'better-sqlite3',
      'pg',
    ],
    'protocol/ depends on wire/ and tasks/ only.',
  ),
  layer(
    ['src/transport/**/*.ts'],
    ['**/stores/*', '**/worker/*', '**/cli/*', '**/client/*', '**/legacy/*', 'better-sqlite3', 'pg'],
    'transport/ depends on protocol/ (and auth/) only; legacy/ is for the HTTP entry alone.',
  ),
  layer(
    ['src/transport/http/handler.ts'],
    ['**/stores/*', '**/worker/*', '**/cli/*', '**/client/*', 'better-sqlite3', 'pg'],
    'transport/ depends on protocol/ (and auth/) only; the HTTP entry also mounts legacy/.',
  ),
  layer(
    ['src/worker/**/*.ts'],
    [
      '../wire/*',
      '../protocol/*',
      '../stores/*',
      '../transport/*',
      '../cli/*',
      '**/legacy/*',
      'better-sqlite3',
      'pg',
    ],
    'worker/ depends on tasks/ only.',
  ),
  layer(
    ['src/client/**/*.ts'],
    [
      '../protocol/*',
      '../tasks/*',
      '../stores/*',
      '../transport/*',
      '../worker/*',
      '../cli/*',
      '**/legacy/*',
      'better-sqlite3',
      'pg',
    ],
    'client/ depends on wire/ only.',
  ),
  layer(
    ['src/stores/**/*.ts'],
    ['**/protocol/*', '**/transport/*', '**/worker/*', '**/cli/*', '**/client/*', '**/legacy/*'],
    'stores/ implement the tasks/ port with their driver only.',
  ),
  // The 2025-11-25 adapter sits on the shared core and is reached only through the HTTP entry.
  layer(
    ['src/legacy/**/*.ts'],
    [
      '**/stores/*',
      '**/transport/*',
      '**/worker/*',
      '**/cli/*',
      '**/client/*',
      '**/auth/*',
      'better-sqlite3',
      'pg',
    ],
    'legacy/ adapts the 2025-11-25 wire onto protocol/, tasks/ and wire/ only.',
  ),
  layer(
    [
      'src/*.ts',
      'src/cli/**/*.ts',
      'src/auth/**/*.ts',
      'src/observability/**/*.ts',
      'src/transport/stdio/**/*.ts',
    ],
    ['**/legacy/*'],
    'legacy/ is imported only by the HTTP entry (transport/http/handler.ts).',
  ),
  // Tests may reach across layers to set up real collaborators (e.g. a worker test on the SQLite store).
  { files: ['src/**/*.test.ts', 'src/**/*.contract.ts'], rules: { 'no-restricted-imports': 'off' } },
);
