import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { AdminApiError, AdminTransportError, createAdminApi, type AdminApi } from './admin-api.js';
import { reportAdminError } from './admin-report.js';
import { EXIT } from './client-flags.js';

/** Answers by path: a status, a content type and a body, as an operator API or something else at its place. */
const ANSWERS: Record<string, [number, string, string]> = {
  '/admin/api/v1/boom': [500, 'text/plain', 'database on fire'],
  '/admin/api/v1/html': [200, 'text/html', '<html>log in</html>'],
  '/admin/api/v1/gone': [404, 'text/plain', ''],
  '/admin/api/v1/conflict': [409, 'application/json', '{"error":{"code":"later","message":"try later"}}'],
  '/admin/api/v1/session': [200, 'application/json', '{"principal":"p"}'],
};

let server: Server;
let api: AdminApi;

beforeAll(async () => {
  server = createServer((req, res) => {
    const [status, type, body] = ANSWERS[req.url ?? ''] ?? [404, 'text/plain', 'no'];
    res.writeHead(status, { 'content-type': type }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  api = createAdminApi(`http://127.0.0.1:${(server.address() as AddressInfo).port}/admin/api/v1`, 't');
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const failure = (p: Promise<unknown>): Promise<unknown> =>
  p.then(
    () => undefined,
    (err: unknown) => err,
  );

describe('the operator API client', () => {
  it('keeps the status and error code of a refusal, and the text of a body that is not JSON', async () => {
    expect(await failure(api.get('/boom'))).toMatchObject({ status: 500, code: undefined, message: 'database on fire' });
    expect(await failure(api.get('/gone'))).toMatchObject({ status: 404, message: 'Not Found' });
    expect(await failure(api.get('/conflict'))).toMatchObject({ status: 409, code: 'later', message: 'try later' });
    expect(await failure(api.get('/boom'))).toBeInstanceOf(AdminApiError);
  }); // prettier-ignore

  it('refuses a success that is not JSON, and a session without a CSRF token', async () => {
    expect(await failure(api.get('/html'))).toBeInstanceOf(AdminTransportError);
    expect(await failure(api.session())).toMatchObject({ message: expect.stringContaining('no csrfToken') });
  });

  it('maps what went wrong to the exit codes of the client commands', async () => {
    const quiet = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      expect(reportAdminError(await failure(api.get('/boom')), api.base)).toBe(EXIT.serverError);
      expect(reportAdminError(await failure(api.get('/html')), api.base)).toBe(EXIT.serverError);
      expect(reportAdminError(await failure(api.get('/conflict')), api.base, 'task_1')).toBe(EXIT.failed);
      expect(quiet.mock.calls.map((c) => String(c[0]))).toEqual([
        'server error 500: database on fire',
        expect.stringMatching(/^error: the answer to GET .*\/html is not the operator API's JSON$/),
        'task task_1: try later (409)',
      ]);
      expect(() => reportAdminError(new Error('a bug'), api.base)).toThrow('a bug');
    } finally {
      quiet.mockRestore();
    }
  });
});
