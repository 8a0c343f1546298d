// The operators' dashboard in a real browser (headless Chromium through playwright-core) against a real `serve` on
// SQLite: sign-in, the overview, filters and pages of the list, a task changing live, a retry, a refused change, a
// bulk cancel, pausing and resuming a tool.
// Screenshots of each view go to test-results/screenshots/. Without Chromium the suite is skipped with a reason,
// except with CI=true, where it fails.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpClient } from '../../src/advanced.js';
import { startAdminServer, TOKENS, waitUntil, type AdminServer } from '../support/admin-api.js';
import { CHROMIUM, CHROMIUM_ARGS, chromiumAvailable, requireChromium, SHOTS } from '../support/browser.js';

/** expect.poll with room for a loaded CI machine (its default gives up after 1 s). */
const poll = <T>(probe: () => Promise<T>, timeout = 10_000) => expect.poll(probe, { timeout, interval: 50 });
requireChromium('dashboard browser tests');

describe.skipIf(!chromiumAvailable)("the operators' dashboard", () => {
  let server: AdminServer;
  let browser: Browser;
  let page: Page;
  const ids: Record<string, string> = {};
  const pageErrors: string[] = [];

  const status = (id: string) => page.locator(`tr[data-task-id="${id}"] [data-status]`);
  const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  const settled = (id: string, want: string) =>
    waitUntil(
      async () => (await server.api('GET', `/tasks/${id}`, 'root')).body.status === want,
      `${id} ${want}`,
    );

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    [server, browser] = await Promise.all([
      // With payloads in the detail, shown collapsed.
      startAdminServer((dir) => ['--store', join(dir, 'tasks.db')], true, ['--admin-payloads']),
      chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS }),
    ]);
    ids.quick1 = await server.create('alice', 'quick_job');
    ids.quick2 = await server.create('alice', 'quick_job');
    ids.quick3 = await server.create('alice', 'quick_job');
    // Step c fails once per `run`: a retry's new task gets past it.
    ids.flaky = await server.create('alice', 'flaky_steps', { run: 'dashboard-flaky' });
    ids.bob = await server.create('bob', 'quick_job');
    for (const id of [ids.quick1, ids.quick2, ids.quick3, ids.bob]) await settled(id as string, 'completed');
    await settled(ids.flaky as string, 'failed');
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.setDefaultTimeout(10_000);
    // Script errors and CSP violations; refused requests (401, 403) are logged by the browser and expected.
    page.on('pageerror', (err) => pageErrors.push(err.message));
    page.on('console', (message) => {
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
        pageErrors.push(message.text());
    });
  }, 40_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('is served with a strict CSP, its own content types and no framing', async () => {
    const html = await fetch(`${server.proc.origin}/admin`);
    expect(html.status).toBe(200);
    expect(html.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(html.headers.get('content-security-policy')).toContain(
      "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'",
    );
    expect(html.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(html.headers.get('x-content-type-options')).toBe('nosniff');
    expect(html.headers.get('cache-control')).toBe('no-cache');
    const js = await fetch(`${server.proc.origin}/admin/ui/app.js`);
    expect([js.status, js.headers.get('content-type')]).toEqual([200, 'text/javascript; charset=utf-8']);
    const again = await fetch(`${server.proc.origin}/admin/ui/app.js`, {
      headers: { 'if-none-match': js.headers.get('etag') ?? '' },
    });
    expect(again.status).toBe(304);
    const css = await fetch(`${server.proc.origin}/admin/ui/dashboard.css`);
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
    for (const path of ['/admin/ui/nope.js', '/admin/ui/../tokens.json', '/admin/ui/app.ts'])
      expect((await fetch(`${server.proc.origin}${path}`)).status, path).toBe(404);
    expect((await fetch(`${server.proc.origin}/admin`, { method: 'POST' })).status).toBe(405);
    const foreign = await fetch(`${server.proc.origin}/admin`, {
      headers: { origin: 'https://evil.example' },
    });
    expect(foreign.status).toBe(403);
  });

  it('streams events to operators only, naming only tasks of their tenants', async () => {
    expect((await server.api('GET', '/events')).status).toBe(401);
    expect((await server.api('GET', '/events', 'alice')).status).toBe(403);
    const abort = new AbortController();
    const res = await fetch(`${server.proc.origin}/admin/api/v1/events`, {
      headers: { authorization: `Bearer ${TOKENS.opsA}` },
      signal: abort.signal,
    });
    expect([res.status, res.headers.get('content-type')]).toEqual([200, 'text/event-stream; charset=utf-8']);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    let text = '';
    const read = async () => (text += new TextDecoder().decode((await reader.read()).value));
    await read();
    expect(text).toBe(': open\n\n');
    const foreign = await server.create('bob', 'quick_job');
    const own = await server.create('alice', 'quick_job');
    while (!text.includes(`"completed"`) || !text.includes(own)) await read();
    abort.abort();
    expect(text).not.toContain(foreign);
    const events = text
      .split('\n\n')
      .filter((m) => m.startsWith('data: '))
      .map((m) => JSON.parse(m.slice(6)) as { taskId: string; task: { status: string; tenant: string } });
    expect(events.every((e) => e.taskId === own && e.task.tenant === 'A')).toBe(true);
    expect(events.at(-1)?.task.status).toBe('completed');
    // Gone again, so that the views below count the tasks made before.
    expect((await server.change('DELETE', `/tasks/${own}`, 'root')).status).toBe(200);
    await server.change('DELETE', `/tasks/${foreign}`, 'root');
  });

  it('signs in with an operator token kept for the tab only, and refuses others plainly', async () => {
    await page.goto(`${server.proc.origin}/admin`);
    await page.getByLabel('Operator token').waitFor();
    await shot('sign-in');
    await page.getByLabel('Operator token').fill(TOKENS.alice);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await poll(() => page.locator('#sign-in-error').textContent()).toContain('403 forbidden');
    await page.getByLabel('Operator token').fill(TOKENS.opsA);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    expect(await page.locator('#who').textContent()).toContain('ops-a @ A');
    // Page code as strings: this file is compiled for Node, without the DOM's names.
    const stored = await page.evaluate<Record<string, string>>('({ ...sessionStorage })');
    expect(stored['durable-mcp-admin.token']).toBe(TOKENS.opsA);
    expect(await page.evaluate('localStorage.length')).toBe(0);
  });

  it('shows counts by status within the operator tenants, and by tool', async () => {
    // Tenant A only: alice's three quick jobs, not bob's.
    await poll(() => page.locator('li[data-status="completed"] strong').textContent()).toBe('3');
    expect(await page.locator('li[data-status="failed"] strong').textContent()).toBe('1');
    await page.getByRole('table', { name: 'By tool' }).getByText('flaky_steps@2').waitFor();
    await page.locator('#live[data-state="live"]').waitFor();
    await shot('overview');
  });

  it('lists tasks newest first, filters them and pages through them', async () => {
    await page.getByRole('link', { name: 'Tasks', exact: true }).click();
    await page.locator('table.tasks tbody tr').first().waitFor();
    expect(await page.locator('table.tasks tbody tr').count()).toBe(4);
    expect(await page.locator(`tr[data-task-id="${ids.bob}"]`).count()).toBe(0);
    await page.getByLabel('Status').selectOption('failed');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await poll(() => page.locator('table.tasks tbody tr').count()).toBe(1);
    await page.locator(`tr[data-task-id="${ids.flaky}"]`).waitFor();
    expect(page.url()).toContain('status=failed');
    await page.getByLabel('Status').selectOption('');
    await page.getByLabel('Tool').fill('quick_job');
    await page.getByLabel('Error text').fill('');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await poll(() => page.locator('table.tasks tbody tr').count()).toBe(3);
    await page.getByLabel('Error text').fill('step c');
    await page.getByLabel('Tool').fill('');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await poll(() => page.locator('table.tasks tbody tr').count()).toBe(1);
    // Pages of two, newest first: the cursor of the first page gives the next two.
    await page.goto(`${server.proc.origin}/admin#/tasks?limit=2`);
    await poll(() => page.locator('table.tasks tbody tr').count()).toBe(2);
    const first = await page
      .locator('table.tasks tbody tr')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-task-id')));
    expect(first).toEqual([ids.flaky, ids.quick3]);
    await page.getByRole('link', { name: 'Next page' }).click();
    await poll(() =>
      page
        .locator('table.tasks tbody tr')
        .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-task-id'))),
    ).toEqual([ids.quick2, ids.quick1]);
    await page.getByRole('link', { name: 'First page' }).waitFor();
  });

  it('shows a task move from working to input_required to completed without a reload', async () => {
    await page.goto(`${server.proc.origin}/admin#/tasks`);
    await page.locator('table.tasks tbody tr').first().waitFor();
    await page.locator('#live[data-state="live"]').waitFor();
    await page.evaluate('window.kept = 42');
    const client = createHttpClient({
      url: server.proc.url,
      token: TOKENS.alice,
      capabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} }, elicitation: {} },
    });
    const created = await client.request('tools/call', { name: 'ask_job', arguments: { ms: 3000 } });
    const id = created.result.taskId as string;
    const foreign = await server.create('bob', 'quick_job');
    await poll(() => status(id).getAttribute('data-status'), 2500).toBe('working');
    await shot('list');
    await poll(() => status(id).getAttribute('data-status')).toBe('input_required');
    await client.request('tasks/update', {
      taskId: id,
      inputResponses: { go: { action: 'accept', content: { go: true } } },
    });
    await poll(() => status(id).getAttribute('data-status')).toBe('completed');
    expect(await page.evaluate('window.kept')).toBe(42);
    // Bob's task (tenant B) never reached ops-a's page.
    await settled(foreign, 'completed');
    expect(await page.locator(`tr[data-task-id="${foreign}"]`).count()).toBe(0);
  });

  it('refuses a retry without the CSRF token, then retries a failed task to completion', async () => {
    await page.goto(`${server.proc.origin}/admin#/tasks?status=failed`);
    await page.locator(`a[href="#/tasks/${ids.flaky}"]`).click();
    await page.getByRole('heading', { name: /^Task / }).waitFor();
    await page.locator('li[data-step="c"]').getByText('1 failed attempt').waitFor();
    expect(await page.locator('.failure').textContent()).toContain('step c broke');
    // The task's story: the statuses it took, and how long each finished step ran.
    expect(
      await page.locator('li[data-status]').evaluateAll((els) => els.map((e) => e.dataset.status)),
    ).toEqual(['working', 'failed']);
    expect(await page.locator('li[data-step="a"]').textContent()).toMatch(/done in \d+ ms/);
    await shot('detail');
    await page.evaluate("sessionStorage.removeItem('durable-mcp-admin.csrf')");
    await page.getByRole('button', { name: 'Retry' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Retry' }).click();
    await poll(() => page.locator('#notice').textContent()).toContain(
      'Retry refused: 403 csrf: Missing or invalid X-CSRF-Token',
    );
    expect((await server.api('GET', `/tasks/${ids.flaky}`, 'root')).body.status).toBe('failed');
    // A reload reads the session again, and with it the token.
    await page.reload();
    await page.getByRole('button', { name: 'Retry' }).click();
    const dialog = page.getByRole('dialog');
    expect(await dialog.textContent()).toContain('runs again from its last finished step');
    await dialog.getByRole('button', { name: 'Retry' }).click();
    // The retry made a new task: the page shows it, running from the last finished step to completion.
    await poll(async () => page.url()).not.toContain(ids.flaky as string);
    const fork = decodeURIComponent(new URL(page.url()).hash.replace('#/tasks/', ''));
    expect(fork).toMatch(/^task_/);
    await poll(() => page.locator('h1 [data-status]').getAttribute('data-status')).toBe('completed');
    expect(await page.locator('#notice').textContent()).toContain(`Retry requested`);
    expect(await page.locator('#notice').textContent()).toContain(fork);
    await page.locator(`dd a[href="#/tasks/${ids.flaky}"]`).waitFor(); // "Retry of"
    await poll(() =>
      page.locator('li[data-status]').evaluateAll((els) => els.map((e) => e.dataset.status)),
    ).toEqual(['working', 'completed']);
    await shot('retried');
    // The task retried stays as it ended, and names the new one.
    expect((await server.api('GET', `/tasks/${ids.flaky}`, 'root')).body.status).toBe('failed');
    await page.locator(`dd a[href="#/tasks/${ids.flaky}"]`).click();
    await page.locator(`dd a[href="#/tasks/${fork}"]`).waitFor(); // "Retried as"
    expect(await page.locator('h1 [data-status]').getAttribute('data-status')).toBe('failed');
  });

  it('finds a tool error by its outcome, and retries it as a new task', async () => {
    const broken = await server.create('alice', 'flaky_steps', {
      run: 'dashboard-tool-error',
      toolError: true,
    });
    await settled(broken, 'completed');
    await page.goto(`${server.proc.origin}/admin#/tasks`);
    await page.locator('table.tasks tbody tr').first().waitFor();
    await page.getByLabel('Outcome', { exact: true }).selectOption('tool_error');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await poll(() =>
      page
        .locator('table.tasks tbody tr')
        .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-task-id'))),
    ).toEqual([broken]);
    expect(page.url()).toContain('outcome=tool_error');
    const row = page.locator(`tr[data-task-id="${broken}"]`);
    expect(await row.locator('[data-status]').getAttribute('data-status')).toBe('completed');
    expect(await row.locator('[data-outcome]').getAttribute('data-outcome')).toBe('tool_error');
    expect(await row.textContent()).toContain('step c broke');
    await shot('tool-errors');
    await row.locator('a').click();
    await page.locator('h1 [data-outcome="tool_error"]').waitFor();
    await page.getByRole('button', { name: 'Retry' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Retry' }).click();
    await poll(async () => page.url()).not.toContain(broken);
    await poll(() => page.locator('h1 [data-status]').getAttribute('data-status')).toBe('completed');
    expect(await page.locator('h1 [data-outcome]').count()).toBe(0); // a clean completion says no more
    expect(await page.locator('dl.facts').textContent()).toContain(`Retry of${broken}`);
    expect((await server.api('GET', `/tasks/${broken}`, 'root')).body).toMatchObject({
      status: 'completed',
      outcome: 'tool_error',
    });
    // The overview counts finished tasks by outcome.
    await page.getByRole('link', { name: 'Overview' }).click();
    await poll(() => page.locator('li[data-outcome="tool_error"] strong').textContent()).toBe('1');
  });

  it('shows a task’s payloads collapsed, as text, then purges it after confirmation', async () => {
    await page.goto(`${server.proc.origin}/admin#/tasks/${ids.quick1}`);
    const payloads = page.locator('section[aria-labelledby="payloads-title"]');
    await payloads.locator('summary', { hasText: 'Result' }).waitFor();
    expect(
      await payloads.locator('details').evaluateAll((els) => els.map((e) => e.hasAttribute('open'))),
    ).toEqual([false, false]);
    expect(await payloads.locator('details', { hasText: 'Arguments' }).locator('pre').textContent()).toBe(
      '{}',
    );
    await payloads.locator('summary', { hasText: 'Result' }).click();
    expect(await payloads.locator('details', { hasText: 'Result' }).locator('pre').textContent()).toContain(
      '"text": "done"',
    );
    await page.getByRole('button', { name: 'Purge' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Keep the task as it is' }).click();
    expect((await server.api('GET', `/tasks/${ids.quick1}`, 'root')).status).toBe(200);
    await page.getByRole('button', { name: 'Purge' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Purge' }).click();
    await page.getByRole('heading', { name: 'Tasks' }).waitFor();
    expect((await server.api('GET', `/tasks/${ids.quick1}`, 'root')).status).toBe(404);
  });

  it('shows a task’s steps in the order they ran, not by name', async () => {
    const id = await server.create('alice', 'ordered_steps');
    await settled(id, 'completed');
    await page.goto(`${server.proc.origin}/admin#/tasks/${id}`);
    await page.locator('li[data-step="mid"]').waitFor();
    expect(await page.locator('li[data-step]').evaluateAll((els) => els.map((e) => e.dataset.step))).toEqual([
      'zeta',
      'alpha',
      'mid',
    ]);
  });

  it('cancels every task the filters match, within the operator’s tenants, after a count and a confirmation', async () => {
    const slow = [await server.create('alice', 'slow_job'), await server.create('alice', 'slow_job')];
    const other = await server.create('bob', 'slow_job');
    await page.goto(`${server.proc.origin}/admin#/tasks?tool=slow_job&status=working&limit=1`);
    await page.locator('table.tasks tbody tr').first().waitFor();
    await page.getByRole('button', { name: 'Cancel all matching' }).click();
    const dialog = page.getByRole('dialog');
    await poll(() => dialog.locator('#confirm-title').textContent()).toBe('Cancel 2 matching tasks?');
    await dialog.getByRole('button', { name: 'Keep the tasks as they are' }).click();
    expect((await server.api('GET', `/tasks/${slow[0]}`, 'root')).body.status).toBe('working');
    await page.getByRole('button', { name: 'Cancel all matching' }).click();
    await shot('bulk-cancel');
    await dialog.getByRole('button', { name: 'Cancel 2 tasks' }).click();
    await poll(() => page.locator('#notice').textContent()).toBe('Cancel: 2 of 2 matching tasks.');
    for (const id of slow) await settled(id, 'cancelled');
    await poll(() => page.locator('table.tasks tbody tr').count()).toBe(0);
    expect((await server.api('GET', `/tasks/${other}`, 'root')).body.status).toBe('working');
  });

  it('pauses a tool after a confirmation, shows its task waiting, and resumes it: the task then finishes', async () => {
    await page.getByRole('link', { name: 'Flow' }).click();
    await page.getByRole('heading', { name: 'Flow control' }).waitFor();
    await page.locator('#no-pauses').waitFor();
    await page.getByLabel('Name').fill('quick_job');
    // An operator of tenant A pauses for tenant A (the only tenant it may pick).
    expect(await page.locator('#pause-tenant').inputValue()).toBe('A');
    await page.getByRole('button', { name: 'Pause', exact: true }).click();
    const dialog = page.getByRole('dialog');
    await poll(() => dialog.locator('#confirm-title').textContent()).toBe(
      'Pause tool “quick_job” (tenant A)?',
    );
    await dialog.getByRole('button', { name: 'Pause', exact: true }).click();
    await poll(() => page.locator('#notice').textContent()).toBe('Paused tool “quick_job” (tenant A).');

    const held = await server.create('alice', 'quick_job');
    const other = await server.create('bob', 'quick_job');
    await settled(other, 'completed');
    const count = page.locator('tr[data-pause="tool:quick_job"] [data-paused-tasks]');
    await poll(() => count.textContent()).toBe('1');
    const task = (await server.api('GET', `/tasks/${held}`, 'root')).body;
    expect(task).toMatchObject({
      status: 'working',
      statusMessage: expect.stringMatching(/^Paused by an operator/),
    });
    await shot('flow-paused');

    await page.getByRole('button', { name: 'Resume' }).click();
    await poll(() => dialog.locator('#confirm-title').textContent()).toBe(
      'Resume tool “quick_job” (tenant A)?',
    );
    await dialog.getByRole('button', { name: 'Resume' }).click();
    await poll(() => page.locator('#notice').textContent()).toBe(
      'Resumed tool “quick_job” (tenant A): 1 task(s) run again.',
    );
    await settled(held, 'completed');
    await page.locator('#no-pauses').waitFor();
  });

  it('signs the tab out, saying why, once the server refuses its token', async () => {
    await page.goto(`${server.proc.origin}/admin#/tasks`);
    await page.locator('table.tasks tbody tr').first().waitFor();
    await page.evaluate(
      "sessionStorage.setItem('durable-mcp-admin.token', 'revoked-token-0123456789abcdef')",
    );
    await page.getByRole('link', { name: 'Overview' }).click();
    await poll(() => page.locator('#sign-in-error').textContent()).toContain('Signed out: 401 unauthorized');
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
    expect(await page.locator('#nav').isHidden()).toBe(true);
  });

  it('ran without a script error or a Content-Security-Policy violation', () => {
    expect(pageErrors).toEqual([]);
  });
});
