// Lint rules. The layering (which folder may import which) is checked by dependency-cruiser: .dependency-cruiser.mjs.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'data/**',
      'bench/results/**',
      'conformance-results/**',
      'docs/api/**',
    ],
  },
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
  // Size: a file over 400 lines or a function over 80 says why at its top (`eslint-disable … -- reason`). Test
  // files keep the file bound only: a describe block is a list of cases, not a function to read at once.
  {
    files: ['src/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.ts'],
    rules: { 'max-lines': ['error', 400], 'max-lines-per-function': ['error', 80] },
  },
  {
    files: ['**/*.test.ts', '**/*.contract.ts'],
    rules: { 'max-lines-per-function': 'off' },
  },
  // The CLI prints only through src/cli/terminal-text.ts, which escapes the control characters of what others
  // supplied (docs/security.md#what-the-cli-prints).
  {
    files: ['src/cli/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-console': 'error',
      'no-restricted-syntax': [
        'error',
        {
          selector:
            "MemberExpression[object.object.name='process'][object.property.name=/^(stdout|stderr)$/][property.name='write']",
          message: 'print through src/cli/terminal-text.ts: it escapes what others supplied',
        },
      ],
    },
  },
);
