// The task metrics by tool, driven through the task observer and read from the exposition text, as a scraper does.
import { describe, expect, it } from 'vitest';
import type { RunInfo } from '../tasks/observer.js';
import type { TaskStore } from '../tasks/store.js';
import { createMetrics, type MetricsOptions } from './metrics.js';

/** Metrics without task gauges (a store without stats): only what the observer is told moves. */
function metricsFor(options: MetricsOptions) {
  const store = {} as TaskStore;
  const metrics = createMetrics(store, Date.now, options);
  /** The value of every series of the exposition whose line starts with one of `prefixes`. */
  const read = async (...prefixes: string[]): Promise<Record<string, number>> => {
    const series: Record<string, number> = {};
    for (const line of (await metrics.registry.metrics()).split('\n')) {
      if (line.startsWith('#') || !prefixes.some((p) => line.startsWith(p))) continue;
      const at = line.lastIndexOf(' ');
      series[line.slice(0, at)] = Number(line.slice(at + 1));
    }
    return series;
  };
  return { metrics, observer: metrics.taskObserver, read };
}

const run = (tool: string, takenOver = false): RunInfo => ({ id: `task-of-${tool}`, tool, takenOver });

describe('task metrics by tool', () => {
  it('count runs started, runs ended by outcome, failures and step retries under the tool', async () => {
    const { observer, read } = metricsFor({ tools: ['search', 'generate_report'] });
    observer.runStarted?.(run('search'));
    observer.stepRetried?.(run('search'), 'fetch', 1);
    observer.runFinished?.(run('search'), 'waiting', 20, true);
    observer.runStarted?.(run('search', true));
    observer.stepRetried?.(run('search'), 'fetch', 2);
    observer.runFinished?.(run('search'), 'failed', 300, true);
    observer.runStarted?.(run('generate_report'));
    observer.runFinished?.(run('generate_report'), 'completed', 2_000, true);
    // The ending write was refused (or never made): the run lost its lease, the task did not fail.
    observer.runStarted?.(run('generate_report'));
    observer.runFinished?.(run('generate_report'), 'failed', 40, false);
    expect(
      await read(
        'durable_mcp_task_runs_started_total',
        'durable_mcp_task_runs_total',
        'durable_mcp_task_failures_total',
        'durable_mcp_step_retries_total',
        'durable_mcp_lease_takeovers_total',
      ),
    ).toEqual({
      'durable_mcp_task_runs_started_total{tool="search"}': 2,
      'durable_mcp_task_runs_started_total{tool="generate_report"}': 2,
      'durable_mcp_task_runs_total{tool="search",outcome="waiting"}': 1,
      'durable_mcp_task_runs_total{tool="search",outcome="failed"}': 1,
      'durable_mcp_task_runs_total{tool="generate_report",outcome="completed"}': 1,
      'durable_mcp_task_runs_total{tool="generate_report",outcome="lease_lost"}': 1,
      'durable_mcp_task_failures_total{tool="search"}': 1,
      'durable_mcp_step_retries_total{tool="search"}': 2,
      durable_mcp_lease_takeovers_total: 1,
    });
  });

  it('measure run durations by tool and by outcome', async () => {
    const { observer, read } = metricsFor({ tools: ['search'] });
    observer.runFinished?.(run('search'), 'completed', 30, true);
    observer.runFinished?.(run('search'), 'input_required', 2_000, true);
    const series = await read(
      'durable_mcp_tool_run_duration_seconds',
      'durable_mcp_task_run_duration_seconds',
    );
    expect(series).toMatchObject({
      'durable_mcp_tool_run_duration_seconds_bucket{le="0.05",tool="search"}': 1,
      'durable_mcp_tool_run_duration_seconds_bucket{le="5",tool="search"}': 2,
      'durable_mcp_tool_run_duration_seconds_count{tool="search"}': 2,
      'durable_mcp_tool_run_duration_seconds_sum{tool="search"}': 2.03,
      'durable_mcp_task_run_duration_seconds_count{outcome="completed"}': 1,
      'durable_mcp_task_run_duration_seconds_count{outcome="input_required"}': 1,
    });
  });

  it('count tools the server does not serve as "other", creations and tool errors included', async () => {
    const { metrics, observer, read } = metricsFor({ tools: ['search'] });
    observer.runStarted?.(run('search'));
    observer.runStarted?.(run('removed_tool'));
    observer.runStarted?.(run('another_removed_tool'));
    observer.runFinished?.(run('removed_tool'), 'failed', 10, true);
    observer.toolError?.({
      taskId: 't',
      tool: 'removed_tool',
      failure: { ref: 'r', name: 'Error', message: 'x', at: 0 },
    });
    metrics.audit({ event: 'task.created', tool: 'removed_tool', outcome: 'ok' });
    metrics.audit({ event: 'task.created', tool: 'search', outcome: 'ok' });
    expect(
      await read(
        'durable_mcp_task_runs_started_total',
        'durable_mcp_task_failures_total',
        'durable_mcp_tool_errors_total',
        'durable_mcp_task_creations_total',
      ),
    ).toEqual({
      'durable_mcp_task_runs_started_total{tool="search"}': 1,
      'durable_mcp_task_runs_started_total{tool="other"}': 2,
      'durable_mcp_task_failures_total{tool="other"}': 1,
      'durable_mcp_tool_errors_total{tool="other"}': 1,
      'durable_mcp_task_creations_total{tool="other"}': 1,
      'durable_mcp_task_creations_total{tool="search"}': 1,
    });
  });

  it('keep at most maxToolLabels tool labels, whatever the number of tools served', async () => {
    const tools = Array.from({ length: 150 }, (_, i) => `tool_${i}`);
    const { observer, read } = metricsFor({ tools });
    for (const tool of tools) observer.runStarted?.(run(tool));
    const series = await read('durable_mcp_task_runs_started_total');
    expect(Object.keys(series)).toHaveLength(101);
    expect(series['durable_mcp_task_runs_started_total{tool="tool_99"}']).toBe(1);
    expect(series['durable_mcp_task_runs_started_total{tool="tool_100"}']).toBeUndefined();
    expect(series['durable_mcp_task_runs_started_total{tool="other"}']).toBe(50);
  });

  it('add up the tasks waiting for code of tools without a label of their own', async () => {
    const { observer, read } = metricsFor({ tools: ['search'] });
    observer.outOfScope?.([
      { tool: 'search', version: '2', count: 3 },
      { tool: 'gone_a', version: '1', count: 2 },
      { tool: 'gone_b', version: '1', count: 5 },
    ]);
    expect(await read('durable_mcp_tasks_waiting_for_code')).toEqual({
      'durable_mcp_tasks_waiting_for_code{tool="search",version="2"}': 3,
      'durable_mcp_tasks_waiting_for_code{tool="other",version="1"}': 7,
    });
  });
});
