import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../args.js';
import { splitCommand, tenantTokensOf, upstreamTarget } from './gateway.js';

describe('gateway flags', () => {
  it('splits a stdio command at spaces, keeping quoted words whole', () => {
    expect(splitCommand(`node "my server.js" --flag 'a b' c`)).toEqual([
      'node',
      'my server.js',
      '--flag',
      'a b',
      'c',
    ]);
  });

  it('reads a stdio upstream with only the environment variables it names', () => {
    process.env.GATEWAY_TEST_VAR = 'v';
    const target = upstreamTarget({
      upstream: 'stdio:node server.js --x',
      'upstream-env': 'GATEWAY_TEST_VAR,UNSET_ONE',
    });
    expect(target).toEqual({
      kind: 'stdio',
      command: 'node',
      args: ['server.js', '--x'],
      env: { GATEWAY_TEST_VAR: 'v' },
    });
  });

  it('reads an HTTP upstream and its token from the environment', () => {
    process.env.GATEWAY_TEST_TOKEN = 'tok-123';
    const target = upstreamTarget({
      upstream: 'https://tools.example/mcp',
      'upstream-token-env': 'GATEWAY_TEST_TOKEN',
    });
    expect(target).toMatchObject({ kind: 'http', headers: { authorization: 'Bearer tok-123' } });
  });

  it('refuses what cannot be an upstream, with a usage error naming the flag', () => {
    const refused = (values: Record<string, string>) => {
      try {
        upstreamTarget(values);
      } catch (err) {
        expect(err).toBeInstanceOf(UsageError);
        return (err as Error).message;
      }
      throw new Error('accepted');
    };
    expect(refused({})).toMatch(/--upstream is required/);
    expect(refused({ upstream: 'ftp://x/mcp' })).toMatch(/http: or https:/);
    expect(refused({ upstream: 'not a url' })).toMatch(/neither a URL nor stdio/);
    expect(refused({ upstream: 'https://user:pw@x/mcp' })).toMatch(/not in the URL/);
    expect(refused({ upstream: 'stdio:' })).toMatch(/names no command/);
    expect(refused({ upstream: 'https://x/mcp', 'upstream-token-env': 'GATEWAY_TEST_UNSET' })).toMatch(
      /not set/,
    );
    process.env.GATEWAY_TEST_TOKEN = 't';
    expect(refused({ upstream: 'stdio:node s.js', 'upstream-token-env': 'GATEWAY_TEST_TOKEN' })).toMatch(
      /HTTP upstream, not a stdio one/,
    );
  });
});

describe('--upstream-tenant-tokens', () => {
  it('reads a JSON object of tokens by tenant, and refuses anything else with a usage error', () => {
    const dir = mkdtempSync(join(tmpdir(), 'durable-mcp-gateway-flags-'));
    const file = (name: string, text: string): string => {
      writeFileSync(join(dir, name), text);
      return join(dir, name);
    };
    try {
      expect(tenantTokensOf(undefined)).toBeUndefined();
      expect(tenantTokensOf(file('ok.json', '{"acme":" tok-1 ","beta":"tok-2"}'))).toEqual({
        acme: 'tok-1',
        beta: 'tok-2',
      });
      for (const text of ['[]', '{"acme":""}', '{"acme":"two words"}', '{"acme":1}', 'not json'])
        expect(() => tenantTokensOf(file('bad.json', text))).toThrow(UsageError);
      expect(() => tenantTokensOf(join(dir, 'missing.json'))).toThrow(/--upstream-tenant-tokens/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
