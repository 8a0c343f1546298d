// What the CLI prints of text that callers, tools and servers supplied. A tenant's arguments become a task's status
// message, input keys, tool error, thrown error and its stack (test/fixtures/tools/hostile-tools.mjs); a task stored
// before keys were checked has an idempotency key with escape sequences; a server answers errors that carry them.
// Every human view shows them escaped (no control character but tab and newline, no C1 CSI, no bidi override reaches
// the terminal, and no field breaks into a line of its own), and --output json keeps the very text.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqliteTaskStore } from '../../src/advanced.js';
import { tokenFile, TOKENS, waitUntil, type Who } from '../support/admin-api.js';
import { BIN, startServe, type ServeProcess } from '../support/cli.js';
import { workerTask } from '../support/tasks.js';

const TOOLS = fileURLToPath(new URL('../fixtures/tools/hostile-tools.mjs', import.meta.url));
/** Clear the screen, set the window title, write the clipboard (OSC 52), the 8-bit CSI, a right-to-left override. */
const ESCAPES = '\u001b[2J\u001b]0;owned\u0007\u001b]52;c;b3duZWQ=\u0007\u009b31m\u202eevil';
const SHOWN = '\\u001b[2J\\u001b]0;owned\\u0007\\u001b]52;c;b3duZWQ=\\u0007\\u009b31m\\u202eevil';
/** What a tenant sends: the escapes, then a line that would pass for another task's. */
const TEXT = `${ESCAPES}\ntask_forged: completed`;
/** The text as a field of one line shows it. */
const TEXT_SHOWN = `${SHOWN}\\ntask_forged: completed`;
/** The key of a task stored before keys were checked. */
const STORED_KEY = `old-key ${ESCAPES}`;

/** Characters a terminal obeys (C0 but tab and newline, DEL, C1) or that reorder what it shows. */
// eslint-disable-next-line no-control-regex -- the characters looked for
const OBEYED = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

let dir: string;
let store: string;
let server: ServeProcess;
let hostile: { url: string; requests: string[]; server: Server };
const ids = { stored: '', asks: '', fails: '', toolError: '' };

/** A command's words for a test's messages, with what a terminal would obey shown as `?`. */
const label = (args: string[]): string => args.join(' ').replace(new RegExp(OBEYED.source, 'g'), '?');

/** The text of one output stream, after checking that nothing in it would be obeyed by a terminal. */
function shown(bytes: Buffer, what: string): string {
  // Bytes 0x80–0x9f also continue UTF-8 sequences: C1 controls are looked for in the decoded text.
  const raw = bytes.findIndex((b) => (b < 0x20 && b !== 0x09 && b !== 0x0a) || b === 0x7f);
  expect(raw, `${what}: a raw control byte at ${raw}`).toBe(-1);
  const text = bytes.toString('utf8');
  // Only the position is reported: a failure must not print what a terminal would obey.
  const at = text.search(OBEYED);
  expect(at, `${what}: U+${text.charCodeAt(at).toString(16).padStart(4, '0')} at ${at}`).toBe(-1);
  return text;
}

interface Run {
  code: number | null;
  out: string;
  err: string;
}

interface Options {
  who?: Who;
  /** --url (default the server's; null: none). */
  url?: string | null;
  /** Whether to check the output for characters a terminal obeys (default true). */
  check?: boolean;
}

/** Starts the CLI; `err()` is what it printed on stderr so far, `done` its exit code and output once it ends. */
function start(args: string[], { who = 'alice', url = server.url, check = true }: Options = {}) {
  const child = spawn(process.execPath, [BIN, ...args, ...(url === null ? [] : ['--url', url])], {
    env: { ...process.env, DURABLE_MCP_TOKEN: TOKENS[who], DURABLE_MCP_URL: undefined },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on('data', (c: Buffer) => out.push(c));
  child.stderr.on('data', (c: Buffer) => err.push(c));
  const text = (chunks: Buffer[], stream: string): string =>
    check
      ? shown(Buffer.concat(chunks), `${label(args)}: ${stream}`)
      : Buffer.concat(chunks).toString('utf8');
  const done = new Promise<number | null>((resolve) => child.on('close', resolve)).then((code): Run => ({
    code,
    out: text(out, 'stdout'),
    err: text(err, 'stderr'),
  }));
  return { done, err: () => Buffer.concat(err).toString('utf8') };
}

const cli = (args: string[], options?: Options): Promise<Run> => start(args, options).done;

/** What the command prints with --output json (exiting with `code`). */
async function json(args: string[], options?: Options, code = 0) {
  const run = await cli([...args, '--output', 'json'], options);
  if (run.code !== code) throw new Error(`${label(args)}: exit ${run.code}: ${run.err}`);
  return JSON.parse(run.out) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** A task of hostile_job with TEXT, not followed: its id once it is `status` with TEXT as its status message. */
async function detached(mode: string, status: string, message?: string): Promise<string> {
  const args = ['call', 'hostile_job', '--arg', `text=${TEXT}`, '--arg', `mode=${mode}`, '--detach'];
  const id = (await cli(args, { check: false })).out.trim();
  const ready = async (): Promise<boolean> => {
    // task get exits 1 for a task that failed or ended in a tool error: its JSON is read either way.
    const task = JSON.parse((await cli(['task', 'get', id, '--output', 'json'], { check: false })).out) as {
      status: string;
      statusMessage?: string;
    };
    return task.status === status && (message === undefined || task.statusMessage === message);
  };
  await waitUntil(ready, `${mode} to be ${status}`);
  return id;
}

/** A server whose every answer is an error carrying TEXT: a JSON-RPC error on /mcp, a 500 on the operator API. */
async function startHostileServer(): Promise<typeof hostile> {
  const requests: string[] = [];
  const http = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const admin = req.url?.startsWith('/admin/') === true;
      const id = admin ? null : ((JSON.parse(body || '{}') as { id?: unknown }).id ?? null);
      res.writeHead(admin ? 500 : 200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify(
          admin
            ? { error: { code: 'x', message: TEXT } }
            : { jsonrpc: '2.0', id, error: { code: -32603, message: TEXT } },
        ),
      );
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/mcp`, requests, server: http };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'durable-mcp-cli-escapes-'));
  store = join(dir, 'tasks.db');
  // A task written before new keys were checked, of a tool no server runs (it stays as stored).
  const before = createSqliteTaskStore({ path: store });
  const task = workerTask(Date.now(), {
    owner: { tenant: 'A', principal: 'alice' },
    tool: 'old_job',
    idempotencyKey: STORED_KEY,
    statusMessage: TEXT,
    ttlMs: 600_000,
  });
  await before.create(task);
  await before.close();
  ids.stored = task.id;
  writeFileSync(join(dir, 'tokens.json'), tokenFile(true));
  server = await startServe(
    ['--port', '0', '--store', store, '--auth', join(dir, 'tokens.json'), '--tools', TOOLS, '--tasks-get-rate', '0', '--admin-payloads'],
    20_000,
  ); // prettier-ignore
  hostile = await startHostileServer();
  [ids.asks, ids.fails, ids.toolError] = await Promise.all([
    detached('asks', 'input_required'),
    detached('fails', 'failed'),
    detached('tool_error', 'completed'),
  ]);
}, 60_000);

afterAll(async () => {
  server?.child.kill('SIGTERM');
  await server?.exited;
  await new Promise((resolve) => hostile?.server.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

describe('what the CLI prints of text that others supplied', () => {
  it('call shows a tool error’s text on its lines and the status line escaped; --output json keeps the text', async () => {
    const args = ['call', 'hostile_job', '--arg', `text=${TEXT}`, '--arg', 'mode=tool_error'];
    const followed = await cli(args);
    expect(followed.code).toBe(1);
    expect(followed.out).toBe(`${SHOWN}\ntask_forged: completed\n`);
    expect(followed.err).toContain(`hostile_job: completed — The tool failed: ${TEXT_SHOWN}\n`);
    expect((await json(args, {}, 1)).result.content[0].text).toBe(TEXT);
  });

  it('task watch shows the status message of a working task escaped, on one line', async () => {
    const id = await detached('works', 'working', TEXT);
    const watch = start(['task', 'watch', id]);
    try {
      await waitUntil(
        async () => watch.err().includes(`${id}: working — ${TEXT_SHOWN}\n`),
        'the status line',
      );
    } finally {
      expect((await cli(['task', 'cancel', id])).code).toBe(0);
    }
    const watched = await watch.done;
    expect(watched.code).toBe(1);
    expect(watched.err).toContain(`${id}: working — ${TEXT_SHOWN}\n`);
    expect(watched.err).not.toMatch(/^task_forged/m);
  });

  it('task get shows input keys, a failed task’s error and a tool error escaped; --output json keeps them', async () => {
    const asks = await cli(['task', 'get', ids.asks]);
    expect(asks.out).toContain(`\n  waiting for: key ${TEXT_SHOWN}\n`);
    const asked = await json(['task', 'get', ids.asks]);
    expect(asked.inputRequests[`key ${TEXT}`].params.message).toBe(TEXT);
    const fails = await cli(['task', 'get', ids.fails]);
    expect(fails.out).toBe(
      `${ids.fails}: failed — The task failed: ${TEXT_SHOWN}\n  error {"code":-32603,"message":"${TEXT_SHOWN}"}\n`,
    );
    expect((await json(['task', 'get', ids.fails], {}, 1)).error.message).toBe(TEXT);
    const toolError = await cli(['task', 'get', ids.toolError]);
    expect(toolError.out).toMatch(
      new RegExp(`\\n  tool error: ${escapeRe(TEXT_SHOWN)} \\(error reference err_`),
    );
    expect(toolError.out).not.toMatch(/^task_forged/m);
    expect((await json(['task', 'get', ids.toolError], {}, 1)).result.content[0].text).toBe(TEXT);
  });

  it('the prompt in a real terminal shows an input request’s question and field escaped', async () => {
    const id = await detached('asks', 'input_required');
    const command = `${process.execPath} ${BIN} task answer ${id} --url ${server.url}`;
    const child = spawn('script', ['-qfec', command, '/dev/null'], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, DURABLE_MCP_TOKEN: TOKENS.alice },
    });
    let screen = '';
    child.stdout.on('data', (c: Buffer) => (screen += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    const shows = (text: string) => waitUntil(async () => screen.includes(text), 'the prompt');
    try {
      await shows('answer? [Y]es');
      child.stdin.write('y\r');
      await shows(`  ${TEXT_SHOWN} [y/n] (optional): `); // the field's title, on one line
      child.stdin.write('y\r');
      expect(await exited).toBe(0);
    } finally {
      child.kill();
    }
    // The question keeps its lines (a terminal shows a newline as CR LF); readline adds its own control sequences.
    expect(screen).toContain(`? ${SHOWN}\r\ntask_forged: completed`);
    for (const obeyed of ['\u001b]', '\u001b[2J']) expect(screen).not.toContain(obeyed);
    expect(screen).not.toMatch(/[\u0080-\u009f\u202a-\u202e]/);
  });

  it('task inspect and admin tasks get show a thrown error, its stack and a stored key escaped', async () => {
    const inspect = ['task', 'inspect', ids.toolError, '--store', store];
    const inspected = await cli(inspect, { url: null });
    expect(inspected.out).toContain(`, attempt 1: Error: ${TEXT_SHOWN}\n`);
    expect(inspected.out).toContain(`\n      Error: ${SHOWN}\n      task_forged: completed\n`); // the stack keeps its lines
    expect(inspected.out).toContain(
      `\n    step ${TEXT_SHOWN}: not done; 1 failed attempt, last Error: ${TEXT_SHOWN}`,
    );
    const failure = (await json(inspect, { url: null })).failure;
    expect(failure.message).toBe(TEXT);
    expect(failure.stack).toContain(`Error: ${TEXT}\n`);
    const admin = await cli(['admin', 'tasks', 'get', ids.toolError], { who: 'root' });
    expect(admin.out).toContain(`, attempt 1: Error: ${TEXT_SHOWN}\n`);
    expect((await json(['admin', 'tasks', 'get', ids.toolError], { who: 'root' })).arguments.text).toBe(TEXT);
    // A task stored before keys were checked: its key, its status message and their history, escaped.
    for (const run of [
      await cli(['task', 'inspect', ids.stored, '--store', store], { url: null }),
      await cli(['admin', 'tasks', 'get', ids.stored], { who: 'root' }),
    ]) {
      expect(run.out).toContain(`\n  idempotency key old-key ${SHOWN}\n`);
      expect(run.out.split('\n')[0]).toBe(`${ids.stored}: working — ${TEXT_SHOWN}`);
      expect(run.out).toMatch(new RegExp(`\\n {4}\\S+ working: ${escapeRe(TEXT_SHOWN)}\\n`));
      expect(run.out).not.toMatch(/^task_forged/m);
    }
    expect(
      (await json(['task', 'inspect', ids.stored, '--store', store], { url: null })).idempotencyKey,
    ).toBe(STORED_KEY);
    expect((await json(['admin', 'tasks', 'get', ids.stored], { who: 'root' })).idempotencyKey).toBe(
      STORED_KEY,
    );
  });

  it('admin tasks list shows errors escaped in its table; --output json keeps them', async () => {
    const table = await cli(['admin', 'tasks', 'list'], { who: 'root' });
    const row = table.out.split('\n').find((l) => l.startsWith(ids.fails));
    expect(row).toContain(SHOWN);
    expect(table.out).not.toMatch(/^task_forged/m);
    const page = await json(['admin', 'tasks', 'list'], { who: 'root' });
    const failed = (page.items as { id: string; error?: { message: string } }[]).find(
      (t) => t.id === ids.fails,
    );
    expect(failed?.error?.message).toBe(TEXT);
  });

  it('tools and the error messages of a server are shown escaped', async () => {
    const tools = await cli(['tools']);
    expect(tools.out).toBe(`hostile_job — Echoes its text everywhere ${SHOWN}\n`);
    expect((await json(['tools']))[0].description).toBe(`Echoes its text everywhere ${ESCAPES}`);
    for (const args of [
      ['tools'],
      ['task', 'get', 'task_x'],
      ['call', 'hostile_job', '--arg', 'mode=result'],
    ])
      expect(await cli(args, { url: hostile.url })).toMatchObject({
        code: 3,
        err: `error -32603: ${TEXT_SHOWN}\n`,
      });
    expect(await cli(['admin', 'tasks', 'list'], { who: 'root', url: hostile.url })).toMatchObject({
      code: 3,
      err: `server error 500: ${TEXT_SHOWN}\n`,
    });
  });

  it('call refuses a new idempotency key with a control character before sending anything', async () => {
    hostile.requests.length = 0;
    const key = `deploy${ESCAPES}`;
    const refused = await cli(['call', 'hostile_job', '--idempotency-key', key], { url: hostile.url });
    expect(refused).toMatchObject({
      code: 2,
      err: 'durable-mcp call: --idempotency-key must not contain control characters (U+001B at 6)\n',
    });
    expect(hostile.requests).toEqual([]);
  });
});

function escapeRe(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
