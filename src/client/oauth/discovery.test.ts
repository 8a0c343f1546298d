import { describe, expect, it } from 'vitest';
import { authorizationServerMetadataUrls, discoverResource, resourceCovers } from './discovery.js';
import { OAuthFlowError } from './types.js';

describe('resourceCovers', () => {
  it('takes the server URL itself or a parent path on the same origin, nothing else', () => {
    expect(resourceCovers('https://a.example/mcp', 'https://a.example/mcp')).toBe(true);
    expect(resourceCovers('https://a.example', 'https://a.example/mcp')).toBe(true);
    expect(resourceCovers('https://a.example/', 'https://a.example/mcp')).toBe(true);
    expect(resourceCovers('https://a.example/mc', 'https://a.example/mcp')).toBe(false);
    expect(resourceCovers('https://a.example/mcp/x', 'https://a.example/mcp')).toBe(false);
    expect(resourceCovers('https://evil.example/mcp', 'https://a.example/mcp')).toBe(false);
    expect(resourceCovers('http://a.example/mcp', 'https://a.example/mcp')).toBe(false);
    expect(resourceCovers('https://a.example/mcp#x', 'https://a.example/mcp')).toBe(false);
  });
});

describe('authorizationServerMetadataUrls', () => {
  it('lists OAuth then OpenID, path-inserted before path-appended, and no root URL for an issuer with a path', () => {
    expect(authorizationServerMetadataUrls('https://as.example')).toEqual([
      'https://as.example/.well-known/oauth-authorization-server',
      'https://as.example/.well-known/openid-configuration',
    ]);
    expect(authorizationServerMetadataUrls('https://as.example/tenant1/')).toEqual([
      'https://as.example/.well-known/oauth-authorization-server/tenant1',
      'https://as.example/.well-known/openid-configuration/tenant1',
      'https://as.example/tenant1/.well-known/openid-configuration',
    ]);
  });
});

describe('discoverResource', () => {
  const json = (body: unknown) =>
    new Response(JSON.stringify(body), { headers: { 'content-type': 'application/json' } });

  it('tries the path-inserted well-known URL, then the root one', async () => {
    const asked: string[] = [];
    const fetch = (async (url: string) => {
      asked.push(url);
      return url === 'https://a.example/.well-known/oauth-protected-resource'
        ? json({ resource: 'https://a.example', authorization_servers: ['https://as.example'] })
        : new Response('', { status: 404 });
    }) as typeof globalThis.fetch;
    const info = await discoverResource({ fetch }, 'https://a.example/mcp');
    expect(info).toEqual({ resource: 'https://a.example', authorizationServers: ['https://as.example'] });
    expect(asked).toEqual([
      'https://a.example/.well-known/oauth-protected-resource/mcp',
      'https://a.example/.well-known/oauth-protected-resource',
    ]);
  });

  it('refuses metadata naming another resource', async () => {
    const fetch = (async () =>
      json({
        resource: 'https://evil.example/mcp',
        authorization_servers: ['https://as.example'],
      })) as unknown as typeof globalThis.fetch;
    await expect(discoverResource({ fetch }, 'https://a.example/mcp')).rejects.toBeInstanceOf(OAuthFlowError);
  });
});
