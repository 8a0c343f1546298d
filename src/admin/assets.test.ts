import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAssetRoute } from './assets.js';

describe('the dashboard files', () => {
  let server: Server;
  let origin: string;
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'durable-mcp-ui-'));
    writeFileSync(join(dir, 'index.html'), '<!doctype html><title>x</title>');
    writeFileSync(join(dir, 'app.js'), 'export {};');
    writeFileSync(join(dir, 'secret.json'), '{}');
    const route = createAssetRoute(dir);
    server = createServer((req, res) => {
      if (!route(req, res)) res.writeHead(418).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    origin = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('serves the page and its modules with their types, a CSP, nosniff and an ETag', async () => {
    for (const [path, type] of [
      ['/admin', 'text/html; charset=utf-8'],
      ['/admin/', 'text/html; charset=utf-8'],
      ['/admin/ui/app.js', 'text/javascript; charset=utf-8'],
    ]) {
      const res = await fetch(`${origin}${path}`);
      expect([res.status, res.headers.get('content-type')], path).toEqual([200, type]);
      expect(res.headers.get('content-security-policy')).toMatch(/^default-src 'self'; script-src 'self';/);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('etag')).toMatch(/^"[\w-]+"$/);
    }
    const head = await fetch(`${origin}/admin`, { method: 'HEAD' });
    expect(head.status).toBe(200);
  });

  it('answers 404 for a missing file and leaves every other path to the edge', async () => {
    expect((await fetch(`${origin}/admin/ui/missing.css`)).status).toBe(404);
    for (const path of ['/admin/ui/secret.json', '/admin/ui/%2e%2e/x.js', '/admin/api/v1/session', '/adminx'])
      expect((await fetch(`${origin}${path}`)).status, path).toBe(418);
  });
});
