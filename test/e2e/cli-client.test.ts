// The client-side CLI in subprocesses: tools, discover, call (sync, detached, followed), task verbs, a real terminal.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, startServe, type ServeProcess } from '../support/cli.js';

const DURABLE_TOOLS = fileURLToPath(new URL('../fixtures/tools/durable-tools.mjs', import.meta.url));
let dir: string;
let server: ServeProcess;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'durable-mcp-cli-client-'));
  server = await startServe(
    ['--port', '0', '--store', join(dir, 'tasks.db'), '--no-audit', '--tools', `demo,${DURABLE_TOOLS}`],
    15_000,
    { DURABLE_MCP_DEMO_OUTLINE_MS: '200', DURABLE_MCP_TEST_LOG: join(dir, 'runs.log') },
  );
});

afterAll(async () => {
  server.child.kill('SIGTERM');
  await server.exited;
  rmSync(dir, { recursive: true, force: true });
});

const cli = (...args: string[]) => {
  const r = spawnSync(
    process.execPath,
    [BIN, ...args, ...(args.includes('--help') ? [] : ['--url', server.url])],
    {
      encoding: 'utf8',
      timeout: 30_000,
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  return { code: r.status, out: r.stdout, err: r.stderr };
};

describe('durable-mcp client commands', () => {
  it('tools and discover', () => {
    const tools = cli('tools');
    expect(tools.code).toBe(0);
    expect(tools.out).toMatch(/^generate_report — /m);
    const discover = JSON.parse(cli('discover', '--output', 'json').out) as { supportedVersions: string[] };
    expect(discover.supportedVersions).toEqual(['2026-07-28']);
  });

  it('call: synchronous results, --arg and --json arguments, tool errors and usage errors have their exit codes', () => {
    expect(cli('call', 'echo', '--arg', 'text=hi there')).toMatchObject({ code: 0, out: 'hi there\n' });
    const sum = JSON.parse(cli('call', 'add', '--json', '{"a":1,"b":2}', '--output', 'json').out) as {
      structuredContent: { sum: number };
    };
    expect(sum.structuredContent.sum).toBe(3);
    expect(cli('call', 'add', '--arg', 'a=1').code).toBe(1); // missing b: -32602, the server refuses the call
    expect(cli('call').code).toBe(2);
    expect(cli('call', '--help').code).toBe(0);
    expect(cli('nope').code).toBe(2);
  });

  it('a detached task can be inspected, answered and watched to its end', () => {
    const created = cli('call', 'generate_report', '--arg', 'size=small', '--detach');
    expect(created.code).toBe(0);
    const taskId = created.out.trim();
    expect(taskId).toMatch(/^task_/);
    let status = '';
    for (let i = 0; i < 50 && !status.includes('input_required'); i++)
      status = cli('task', 'get', taskId).out;
    expect(status).toContain('waiting for: approve_outline');
    // An answer that does not answer the question is refused whole, naming the key and the field.
    const refused = cli(
      'task',
      'answer',
      taskId,
      '--responses',
      '{"approve_outline":{"action":"accept","content":{"approved":"yes"}}}',
    );
    expect(refused.code).not.toBe(0);
    expect(refused.err).toContain('answer to "approve_outline": content.approved: expected true or false');
    expect(cli('task', 'get', taskId).out).toContain('waiting for: approve_outline');
    const answered = cli(
      'task',
      'answer',
      taskId,
      '--responses',
      '{"approve_outline":{"action":"accept","content":{"approved":true}}}',
    );
    expect(answered.code).toBe(0);
    const watched = cli('task', 'watch', taskId, '--output', 'json');
    expect(watched.code).toBe(0);
    expect(JSON.parse(watched.out)).toMatchObject({
      status: 'completed',
      result: { structuredContent: { approved: true } },
    });
  });

  it('without a terminal, a task that needs input exits 4 with a hint', () => {
    const r = cli('call', 'generate_report', '--arg', 'size=small');
    expect(r.code).toBe(4);
    expect(r.err).toMatch(/durable-mcp task answer task_/);
  });

  it('in a real terminal it prompts with the form schema and finishes the task', async () => {
    const command = `${process.execPath} ${BIN} call generate_report --arg size=small --url ${server.url}`;
    const child = spawn('script', ['-qfec', command, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let screen = '';
    child.stdout.on('data', (c: Buffer) => (screen += c.toString()));
    const waitFor = async (text: string) => {
      for (let i = 0; i < 200 && !screen.includes(text); i++) await new Promise((r) => setTimeout(r, 50));
      expect(screen).toContain(text);
    };
    await waitFor('answer? [Y]es');
    child.stdin.write('y\r');
    await waitFor('Approve the outline [y/n]');
    // Not an answer to a yes/no question: asked again.
    child.stdin.write('maybe\r');
    await waitFor('expected true or false, got "maybe"');
    child.stdin.write('y\r');
    const code = await new Promise<number | null>((r) => child.on('exit', r));
    expect(screen).toContain('small report');
    expect(code).toBe(0);
  }, 30_000);
  it('a server that is not there: every command names the URL it cannot reach; call suggests no key (nothing was sent)', async () => {
    // A port that was free a moment ago: nothing listens on it.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as AddressInfo;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const url = `http://127.0.0.1:${port}/mcp`;
    // The client retries a refused connection for a few seconds (a restarting server): the three run at once.
    const run = (args: string[]) =>
      new Promise<{ args: string; status: number | null; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, [BIN, ...args, '--url', url], {
          stdio: ['ignore', 'ignore', 'pipe'],
        });
        let stderr = '';
        child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
        child.on('close', (status) => resolve({ args: args.join(' '), status, stderr }));
      });
    const runs = await Promise.all(
      [['call', 'echo', '--arg', 'text=hi'], ['task', 'get', `task_${'A'.repeat(32)}`], ['tools']].map(run),
    );
    for (const r of runs) {
      expect(r.status, r.args).toBe(3);
      expect(r.stderr, r.args).toBe(
        `error: cannot reach ${url}: connection refused (is the server running there?) (ECONNREFUSED)\n`,
      );
    }
  });

  it('call --idempotency-key: the same key reaches the same task, other arguments are refused', () => {
    const call = (id: string) =>
      cli('call', 'tracked_job', '--arg', `id=${id}`, '--idempotency-key', 'deploy-7', '--detach');
    const first = call('x');
    expect(first.code).toBe(0);
    expect(call('x')).toMatchObject({ code: 0, out: first.out });
    const other = call('y');
    expect(other.code).toBe(1);
    expect(other.err).toContain('error -32602: Invalid params: this idempotency key was already used');
  });

  it('task get shows a tool error with its reference; task inspect shows operators where it came from', () => {
    const taskId = cli('call', 'flaky_job', '--detach').out.trim();
    let got = '';
    for (let i = 0; i < 100 && !got.includes(': completed'); i++) got = cli('task', 'get', taskId).out;
    const ref = /error reference (err_[\w-]+)/.exec(got)?.[1];
    expect(got).toContain(`tool error: fetch failed hard (attempt 3) (error reference ${ref})`);
    const inspect = (...extra: string[]) =>
      spawnSync(
        process.execPath,
        [BIN, 'task', 'inspect', taskId, '--store', join(dir, 'tasks.db'), ...extra],
        {
          encoding: 'utf8',
          timeout: 30_000,
        },
      );
    const human = inspect();
    expect(human.status).toBe(0);
    expect(human.stdout).toContain('tool flaky_job, owner default/anonymous, runs 3');
    expect(human.stdout).toContain(
      `tool error ${ref} in step "fetch", attempt 3: Error: fetch failed hard (attempt 3)`,
    );
    expect(human.stdout).toMatch(/^ {6} +at .*durable-tools\.mjs/m); // the stack, indented
    // The story: created working, then completed (a tool error is a completed result), on a timeline.
    expect(human.stdout).toMatch(
      /^ {2}history \(UTC\):\n {4}\d\d:\d\d:\d\d\.\d{3} working.*\n {4}\d\d:\d\d:\d\d\.\d{3} completed/m,
    );
    expect(human.stdout).toContain(
      '    fetch: not done; 3 failed attempts, last Error: fetch failed hard (attempt 3) (no retry left)',
    );
    const json = JSON.parse(inspect('--output', 'json').stdout) as { failure: { ref: string } };
    expect(json.failure.ref).toBe(ref);
    expect(inspect('--store', join(dir, 'nothing-here.db')).status).not.toBe(0);
    expect(spawnSync(process.execPath, [BIN, 'task', 'inspect', taskId], { encoding: 'utf8' }).status).toBe(
      2,
    );
  });
});
