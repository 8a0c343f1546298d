// The operators' dashboard of a gateway in a real browser (headless Chromium through playwright-core): in front of the
// SDK v1 test upstream (stdio), a non-idempotent call whose gateway was SIGKILLed mid-call ends "outcome unknown";
// the overview shows the upstream's health and links to such tasks, the list finds it, its detail shows where the
// call stands (dispatched, no answer kept) and the three choices, and the record-outcome form, checked as a JSON
// object before it is sent with the CSRF token, completes it through a linked task without calling the upstream.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOKENS, waitUntil } from '../support/admin-api.js';
import { CHROMIUM, CHROMIUM_ARGS, chromiumAvailable, requireChromium, SHOTS } from '../support/browser.js';
import type { ServeProcess } from '../support/cli.js';
import {
  callTool,
  gatewayDir,
  settled,
  startGateway,
  upstreamCalls,
  type GatewayDir,
  type Json,
} from '../support/gateway.js';

/** expect.poll with room for a loaded CI machine (its default gives up after 1 s). */
const poll = <T>(probe: () => Promise<T>, timeout = 10_000) => expect.poll(probe, { timeout, interval: 50 });
requireChromium('gateway dashboard browser tests');

describe.skipIf(!chromiumAvailable)("a gateway's operators' dashboard", () => {
  let at: GatewayDir;
  const procs: ServeProcess[] = [];
  let gateway: ServeProcess;
  let browser: Browser;
  let page: Page;
  let unknown = '';
  let answered = '';
  const pageErrors: string[] = [];
  const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  const api = async (path: string): Promise<Json> =>
    (await (
      await fetch(`${gateway.origin}/admin/api/v1${path}`, {
        headers: { authorization: `Bearer ${TOKENS.opsA}` },
      })
    ).json()) as Json;

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    at = gatewayDir(mkdtempSync(join(tmpdir(), 'durable-mcp-gateway-dashboard-')));
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    // A payment the upstream takes 2 s to make; the gateway is SIGKILLed once it was sent.
    const first = await startGateway(at, procs);
    const created = await callTool(first, 'alice', 'send_payment', { to: 'carol', cents: 700, ms: 2_000 });
    unknown = created.taskId as string;
    await waitUntil(async () => upstreamCalls(at, 'send_payment').length === 1, 'the call upstream');
    first.child.kill('SIGKILL');
    await first.exited;
    gateway = await startGateway(at, procs);
    const failed = await settled(gateway, unknown, ['failed']);
    expect(failed.error).toMatchObject({ data: { outcome: 'unknown', tool: 'send_payment' } });
    // And one call that went through: its answer is kept.
    const sum = await callTool(gateway, 'alice', 'slow_sum', { a: 2, b: 3, ms: 10 });
    answered = sum.taskId as string;
    await settled(gateway, answered, ['completed']);
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.setDefaultTimeout(10_000);
    page.on('pageerror', (err) => pageErrors.push(err.message));
    page.on('console', (message) => {
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
        pageErrors.push(message.text());
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    for (const p of procs.splice(0)) {
      p.child.kill('SIGKILL');
      await p.exited;
    }
    if (at !== undefined) rmSync(at.dir, { recursive: true, force: true });
  });

  it('shows the upstream’s health on the overview, with its metrics and a link to the outcome-unknown tasks', async () => {
    await page.goto(`${gateway.origin}/admin`);
    await page.getByLabel('Operator token').fill(TOKENS.opsA);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    const health = page.locator('#health li[data-kind="upstream"]');
    await health.waitFor();
    // It answered the calls since the restart.
    await poll(() => health.getAttribute('data-health')).toBe('up');
    expect(await health.textContent()).toContain('upstream-v1.mjs');
    expect(await health.textContent()).toMatch(/\d+ calls?, \d+ errors?/);
    expect(await health.locator('details li').allTextContents()).toContain(
      'durable_mcp_upstream_calls_total{upstream="node"}',
    );
    // The one outcome-unknown task of tenant A, counted beside its link.
    expect(await page.locator('#unknown-count').textContent()).toBe('1');
    await shot('gateway-overview');
    await page.locator('#unknown-link').click();
    await poll(async () => page.url()).toContain('errorOutcome=unknown');
  });

  it('lists the outcome-unknown task, and not the one that was answered', async () => {
    const row = page.locator(`tr[data-task-id="${unknown}"]`);
    await row.waitFor();
    expect(await row.locator('[data-error-outcome="unknown"]').textContent()).toBe('outcome unknown');
    expect(await page.locator(`tr[data-task-id="${answered}"]`).count()).toBe(0);
    expect(await page.locator('#filter-errorOutcome').inputValue()).toBe('unknown');
    await shot('gateway-unknown-list');
  });

  it('shows where each call stands: dispatched with no answer kept, or answered', async () => {
    // Each view is read after the hash changes: wait for the task's own title before reading it.
    const dispatch = page.locator('#upstream [data-dispatch]');
    await page.goto(`${gateway.origin}/admin#/tasks/${answered}`);
    await page.locator('#task-title').getByText(answered).waitFor();
    expect(await dispatch.getAttribute('data-dispatch')).toBe('answered');
    expect(await page.locator('#outcome-unknown').count()).toBe(0);
    await page.goto(`${gateway.origin}/admin#/tasks/${unknown}`);
    await page.locator('#task-title').getByText(unknown).waitFor();
    expect(await dispatch.getAttribute('data-dispatch')).toBe('dispatched');
    expect(await page.locator('#upstream').textContent()).toMatch(
      /stdio:node \S*fixtures\/gateway\/upstream-v1\.mjs/,
    );
    const choices = page.locator('#outcome-unknown');
    expect(await choices.textContent()).toContain('Retry (above) makes a new task');
    expect(await page.locator('#leave-failed').textContent()).toContain('There is no “acknowledged” state');
    await page.getByRole('button', { name: 'Retry' }).waitFor();
    await shot('gateway-unknown-detail');
  });

  it('records the outcome the operator verified: checked as a JSON object, then a linked task completes with it', async () => {
    const form = page.locator('#record-outcome');
    // Not an object: refused in the page, nothing sent.
    await form.getByLabel(/upstream’s result/).fill('[1, 2]');
    await form.getByRole('button', { name: 'Record outcome' }).click();
    await poll(() => page.locator('#record-error').textContent()).toContain('must be a JSON object');
    await form.getByLabel(/upstream’s result/).fill('{"content": [');
    await form.getByRole('button', { name: 'Record outcome' }).click();
    await poll(() => page.locator('#record-error').textContent()).toContain('Not JSON');
    expect(await page.getByRole('dialog').isVisible()).toBe(false);
    expect(((await api(`/tasks/${unknown}`)).retries as unknown[] | undefined) ?? []).toEqual([]);
    const recorded = { content: [{ type: 'text', text: 'paid 700 to carol (checked by ops)' }] };
    await form.getByLabel(/upstream’s result/).fill(JSON.stringify(recorded, null, 2));
    await form.getByRole('button', { name: 'Record outcome' }).click();
    const dialog = page.getByRole('dialog');
    expect(await dialog.textContent()).toContain('without calling the upstream');
    await dialog.getByRole('button', { name: 'Record outcome' }).click();
    // The page shows the new task, which completes with the recorded result.
    await poll(async () => page.url()).not.toContain(unknown);
    const made = decodeURIComponent(new URL(page.url()).hash.replace('#/tasks/', ''));
    expect(made).toMatch(/^task_/);
    await poll(() => page.locator('h1 [data-status]').getAttribute('data-status'), 20_000).toBe('completed');
    expect(await page.locator('#notice').textContent()).toContain('Outcome recorded');
    await page.locator(`dd a[href="#/tasks/${unknown}"]`).waitFor(); // "Retry of"
    expect(await page.locator('#upstream [data-dispatch]').getAttribute('data-dispatch')).toBe('answered');
    await shot('gateway-recorded');
    const done = await settled(gateway, made, ['completed']);
    expect(done.result).toMatchObject(recorded);
    // The task retried stays failed, and the upstream was called once in all.
    expect((await api(`/tasks/${unknown}`)).status).toBe('failed');
    expect(upstreamCalls(at, 'send_payment')).toHaveLength(1);
  });

  it('ran without a script error or a Content-Security-Policy violation', () => {
    expect(pageErrors).toEqual([]);
  });
});
