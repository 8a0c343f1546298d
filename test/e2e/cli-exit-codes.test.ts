// The client commands' exit codes against a real `serve` (and a server that fails): 0 done; 1 a tool error, a failed
// or cancelled task, a refused request; 2 usage; 3 a server that cannot answer; 4 input needed without a terminal.
// Also what `task answer` says of answers the task does not wait for, and `call --json @FILE` / `--json -`.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../support/admin-api.js';
import { BIN, startServe, type ServeProcess } from '../support/cli.js';

const TOOLS = fileURLToPath(new URL('../fixtures/tools/hostile-tools.mjs', import.meta.url));
/** The server's cap on each principal's unfinished tasks (the quota test reaches it). */
const MAX_ACTIVE = 5;

let dir: string;
let server: ServeProcess;
let failing: { server: Server; url: (path: string) => string };

interface Run {
  code: number | null;
  out: string;
  err: string;
}

/** Runs the CLI against `url` (default the server), with `input` on its stdin; never a terminal. */
function cli(args: string[], { url = server.url, input = '' }: { url?: string; input?: string } = {}) {
  const child = spawn(process.execPath, [BIN, ...args, '--url', url], { stdio: 'pipe' });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  child.stdin.on('error', () => undefined); // a command that does not read its input
  child.stdin.end(input);
  return new Promise<Run>((resolve) => child.on('close', (code) => resolve({ code, out, err })));
}

/** The task's status as `task get --output json` reads it. */
const statusOf = async (id: string): Promise<unknown> =>
  (JSON.parse((await cli(['task', 'get', id, '--output', 'json'])).out) as { status: unknown }).status;

/** A task of hostile_job in `mode`, not followed: its id once it is `status`. */
async function detached(mode: string, status: string, text = 'q'): Promise<string> {
  const made = await cli([
    'call',
    'hostile_job',
    '--arg',
    `text=${text}`,
    '--arg',
    `mode=${mode}`,
    '--detach',
  ]);
  expect(made.code, made.err).toBe(0);
  const id = made.out.trim();
  await waitUntil(async () => (await statusOf(id)) === status, `${mode} to be ${status}`);
  return id;
}

/**
 * A server that fails every request (500, -32603) under /internal, refuses it (-32602) under /refusing, and answers
 * what is not JSON under /garbled.
 */
async function startFailingServer(): Promise<typeof failing> {
  const error = (code: number, message: string): string =>
    JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code, message } });
  const http = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const json = { 'content-type': 'application/json' };
      if (req.url?.startsWith('/internal') === true)
        res.writeHead(500, json).end(error(-32603, 'Internal error'));
      else if (req.url?.startsWith('/refusing') === true)
        res.writeHead(200, json).end(error(-32602, 'Invalid params: no'));
      else res.writeHead(200, json).end('<html>welcome</html>');
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return { server: http, url: (path) => `http://127.0.0.1:${port}${path}` };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'durable-mcp-cli-exit-'));
  [server, failing] = await Promise.all([
    startServe(
      ['--port', '0', '--store', join(dir, 'tasks.db'), '--no-audit', '--tools', `demo,${TOOLS}`,
        '--tasks-get-rate', '0', '--max-active-tasks', String(MAX_ACTIVE)],
      20_000,
    ), // prettier-ignore
    startFailingServer(),
  ]);
}, 30_000);

afterAll(async () => {
  server?.child.kill('SIGTERM');
  await server?.exited;
  await new Promise((resolve) => failing?.server.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

describe('the exit codes of the client commands', () => {
  it('0: a result, a task that completed, an answer the task waited for', async () => {
    expect(await cli(['call', 'echo', '--arg', 'text=hi'])).toMatchObject({ code: 0, out: 'hi\n' });
    const done = await detached('result', 'completed');
    expect(await cli(['task', 'get', done])).toMatchObject({
      code: 0,
      out: expect.stringContaining(': completed'),
    });
    const asks = await detached('asks', 'input_required');
    const answer = '{"key q":{"action":"accept","content":{"ok":true}}}';
    expect(await cli(['task', 'answer', asks, '--responses', answer])).toMatchObject({
      code: 0,
      out: 'answered key q\n',
      err: '',
    });
  });

  it('1: a task that ended in a tool error, failed or was cancelled, as task get shows it', async () => {
    const toolError = await detached('tool_error', 'completed');
    const failed = await detached('fails', 'failed');
    const cancelled = await detached('works', 'working');
    expect((await cli(['task', 'cancel', cancelled])).code).toBe(0);
    await waitUntil(async () => (await statusOf(cancelled)) === 'cancelled', 'the cancel');
    expect(await cli(['task', 'get', toolError])).toMatchObject({
      code: 1,
      out: expect.stringContaining('  tool error: q (error reference err_'),
    });
    expect(await cli(['task', 'get', failed])).toMatchObject({
      code: 1,
      out: expect.stringContaining(': failed'),
    });
    expect(await cli(['task', 'get', cancelled])).toMatchObject({
      code: 1,
      out: expect.stringContaining(`${cancelled}: cancelled`),
    });
    expect((await cli(['task', 'get', failed, '--output', 'json'])).code).toBe(1);
  });

  it('1: a request the server refuses: an unknown task, a key reused with other arguments, bad arguments', async () => {
    const unknown = await cli(['task', 'get', `task_${'A'.repeat(32)}`]);
    expect(unknown).toMatchObject({ code: 1, err: expect.stringMatching(/^error -32602: .*Task not found/) });
    const call = (text: string) =>
      cli(['call', 'hostile_job', '--arg', `text=${text}`, '--arg', 'mode=result', '--idempotency-key', 'k-1', '--detach']);
    expect((await call('a')).code).toBe(0);
    const conflict = await call('b');
    expect(conflict).toMatchObject({ code: 1, err: expect.stringContaining('error -32602: Invalid params: this idempotency key') });
    expect((await cli(['call', 'add', '--arg', 'a=1'])).code).toBe(1); // b is missing
  }); // prettier-ignore

  it('1: task answer to a task that waits for no answer says so and sends nothing', async () => {
    const done = await detached('result', 'completed');
    const answer = '{"key q":{"action":"accept","content":{"ok":true}}}';
    expect(await cli(['task', 'answer', done, '--responses', answer])).toMatchObject({
      code: 1,
      out: '',
      err: `task ${done} is completed: it waits for no answer; nothing was sent\n`,
    });
  });

  it('1: task answer sends only the answers the task waits for, and names the others', async () => {
    const asks = await detached('asks', 'input_required');
    const only = await cli(['task', 'answer', asks, '--responses', '{"nope":{"action":"decline"}}']);
    expect(only).toMatchObject({
      code: 1,
      out: '',
      err:
        `not sent: "nope": task ${asks} does not wait for it (it waits for: key q)\n` +
        `nothing was sent to task ${asks}\n`,
    });
    expect(await statusOf(asks)).toBe('input_required');
    const both = '{"nope":{"action":"decline"},"key q":{"action":"accept","content":{"ok":true}}}';
    const partly = await cli(['task', 'answer', asks, '--responses', both, '--output', 'json']);
    expect(partly.code).toBe(1);
    expect(JSON.parse(partly.out)).toEqual({ taskId: asks, answered: ['key q'], ignored: ['nope'] });
    expect(partly.err).toContain('not sent: "nope"');
    await waitUntil(async () => (await statusOf(asks)) === 'completed', 'the answer to be taken');
  });

  it('2: usage: --json @FILE that cannot be read or is not a JSON object, --json - that is not JSON', async () => {
    const missing = join(dir, 'missing.json');
    expect(await cli(['call', 'echo', '--json', `@${missing}`])).toMatchObject({
      code: 2,
      err: `durable-mcp call: --json @${missing}: cannot read the file (ENOENT)\n`,
    });
    expect(await cli(['call', 'echo', '--json', `@${dir}`])).toMatchObject({
      code: 2,
      err: `durable-mcp call: --json @${dir}: cannot read the file (EISDIR)\n`,
    });
    writeFileSync(join(dir, 'list.json'), '[1]');
    expect(await cli(['call', 'echo', '--json', `@${join(dir, 'list.json')}`])).toMatchObject({
      code: 2,
      err: `durable-mcp call: --json @${join(dir, 'list.json')} must be a JSON object\n`,
    });
    expect(await cli(['call', 'echo', '--json', '-'], { input: '{"text":' })).toMatchObject({
      code: 2,
      err: expect.stringMatching(/^durable-mcp call: --json - \(stdin\): not valid JSON \(.+\)\n$/),
    });
    expect((await cli(['call', '--help'])).out).toContain('Exit codes: 0 done; 1 tool error');
  });

  it('3: a server that fails (-32603, HTTP 500) or answers something that is not the protocol, and only then', async () => {
    for (const args of [['tools'], ['task', 'get', `task_${'A'.repeat(32)}`], ['call', 'echo', '--arg', 'text=x']])
      expect(await cli(args, { url: failing.url('/internal/mcp') })).toMatchObject({
        code: 3,
        err: 'error -32603: Internal error\n',
      });
    const garbled = await cli(['tools'], { url: failing.url('/garbled/mcp') });
    expect(garbled).toMatchObject({ code: 3, err: expect.stringContaining('not JSON') });
    // 3 is for such servers only: the same request refused is 1.
    expect(await cli(['tools'], { url: failing.url('/refusing/mcp') })).toMatchObject({
      code: 1,
      err: 'error -32602: Invalid params: no\n',
    });
  }); // prettier-ignore

  it('4: input needed and no terminal to ask on', async () => {
    const r = await cli(['call', 'hostile_job', '--arg', 'text=q', '--arg', 'mode=asks']);
    expect(r.code).toBe(4);
    expect(r.err).toMatch(/durable-mcp task answer task_/);
  });

  it('call --json @FILE and --json - take arguments too large for a command line', async () => {
    const text = 'x'.repeat(3 * 1024 * 1024 + 17);
    writeFileSync(join(dir, 'big.json'), JSON.stringify({ text }));
    const fromFile = await cli(['call', 'echo', '--json', `@${join(dir, 'big.json')}`]);
    expect({ code: fromFile.code, err: fromFile.err, length: fromFile.out.length }).toEqual({
      code: 0,
      err: '',
      length: text.length + 1,
    });
    const fromStdin = await cli(['call', 'echo', '--json', '-', '--output', 'json'], {
      input: JSON.stringify({ text }),
    });
    expect(fromStdin.code).toBe(0);
    expect((JSON.parse(fromStdin.out) as { content: { text: string }[] }).content[0]?.text).toBe(text);
  });

  it('1: a quota: the server refuses more unfinished tasks than it allows each principal', async () => {
    const made: string[] = [];
    let refused: Run | undefined;
    for (let i = 0; i <= MAX_ACTIVE && refused === undefined; i++) {
      const r = await cli(['call', 'hostile_job', '--arg', 'text=q', '--arg', 'mode=works', '--detach']);
      if (r.code === 0) made.push(r.out.trim());
      else refused = r;
    }
    expect(refused).toMatchObject({ code: 1, err: expect.stringMatching(/^error 429: /) });
    for (const id of made) expect((await cli(['task', 'cancel', id])).code).toBe(0);
  });
});
