import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createFileTokenStore } from './file-store.js';
import { createMemoryTokenStore } from './memory-store.js';
import type { SignInRecord, TokenStore } from './types.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempPath(): string {
  const dir = mkdtempSync(join(tmpdir(), 'durable-mcp-tokens-'));
  dirs.push(dir);
  return join(dir, 'nested', 'tokens.json');
}

const record = (resource: string, issuer = 'https://as.example', token = 'tok'): SignInRecord => ({
  resource,
  issuer,
  client: { clientId: 'c', authMethod: 'none', registeredBy: 'dynamic' },
  tokens: { accessToken: token, tokenType: 'Bearer' },
  updatedAt: '2026-01-01T00:00:00.000Z',
});

const stores: [string, () => TokenStore][] = [
  ['memory', () => createMemoryTokenStore()],
  ['file', () => createFileTokenStore(tempPath())],
];

describe.each(stores)('%s token store', (_name, newStore) => {
  it('keeps one record per resource, a later one from another issuer replacing it', async () => {
    const store = newStore();
    await store.set(record('https://a.example/mcp'));
    await store.set(record('https://b.example/mcp'));
    await store.set(record('https://a.example/mcp', 'https://other-as.example', 'tok2'));
    expect((await store.get('https://a.example/mcp'))?.issuer).toBe('https://other-as.example');
    expect((await store.get('https://b.example/mcp'))?.issuer).toBe('https://as.example');
    expect((await store.list()).map((r) => r.resource).sort()).toEqual([
      'https://a.example/mcp',
      'https://b.example/mcp',
    ]);
    await store.delete('https://a.example/mcp');
    expect(await store.get('https://a.example/mcp')).toBeUndefined();
    expect(await store.list()).toHaveLength(1);
  });
});

describe('createFileTokenStore', () => {
  it('creates the file 0600 in a 0700 directory and leaves no temporary file', async () => {
    const path = tempPath();
    const store = createFileTokenStore(path);
    await store.set(record('https://a.example/mcp'));
    await store.set(record('https://b.example/mcp'));
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(path, '..')).mode & 0o777).toBe(0o700);
    expect(readdirSync(join(path, '..'))).toEqual(['tokens.json']);
  });

  it('keeps the records another process wrote meanwhile (it reads the file again before writing)', async () => {
    const path = tempPath();
    const one = createFileTokenStore(path);
    const other = createFileTokenStore(path);
    await one.set(record('https://a.example/mcp'));
    await other.set(record('https://b.example/mcp'));
    await one.set(record('https://c.example/mcp'));
    expect((await createFileTokenStore(path).list()).map((r) => r.resource).sort()).toEqual([
      'https://a.example/mcp',
      'https://b.example/mcp',
      'https://c.example/mcp',
    ]);
  });

  it('serialises the writes of one process', async () => {
    const path = tempPath();
    const store = createFileTokenStore(path);
    await Promise.all(Array.from({ length: 10 }, (_, i) => store.set(record(`https://s${i}.example/mcp`))));
    expect(await store.list()).toHaveLength(10);
  });
});
