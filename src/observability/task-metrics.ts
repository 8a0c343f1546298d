// The task metrics and the observer that feeds them: runs started and ended by tool and outcome, their durations,
// step retries, task failures, tool errors, creations, lease takeovers, refusals. `tool` labels are bounded.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { AuditEvent } from '../protocol/audit.js';
import type { RunInfo, TaskObserver } from '../tasks/observer.js';
import type { RunOutcome } from '../tasks/task.js';

const P = 'durable_mcp_';

/** The `outcome` of a run whose ending write was refused or not made: another worker runs the task now or later. */
export const LEASE_LOST_OUTCOME = 'lease_lost';

const RUN_BUCKETS = [0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300, 1800];

/** What the task metrics count and measure. */
function taskInstruments(registry: Registry) {
  const registers = [registry];
  return {
    created: new Counter({
      name: `${P}task_creations_total`,
      help: 'Tasks created, by tool',
      labelNames: ['tool'],
      registers,
    }),
    started: new Counter({
      name: `${P}task_runs_started_total`,
      help: 'Task runs started (claims of a task by a worker), by tool',
      labelNames: ['tool'],
      registers,
    }),
    ended: new Counter({
      name: `${P}task_runs_total`,
      help: 'Task runs by tool and how they ended (completed, failed, cancelled, input_required, waiting, released, lease_lost)',
      labelNames: ['tool', 'outcome'],
      registers,
    }),
    durations: new Histogram({
      name: `${P}task_run_duration_seconds`,
      help: 'Duration of task runs by outcome (one run lasts until the task ends or waits)',
      labelNames: ['outcome'],
      buckets: RUN_BUCKETS,
      registers,
    }),
    toolDurations: new Histogram({
      name: `${P}tool_run_duration_seconds`,
      help: 'Duration of task runs by tool, whatever their outcome (one run lasts until the task ends or waits)',
      labelNames: ['tool'],
      buckets: RUN_BUCKETS,
      registers,
    }),
    retries: new Counter({
      name: `${P}step_retries_total`,
      help: 'Failed step attempts that will be retried, by tool',
      labelNames: ['tool'],
      registers,
    }),
    failures: new Counter({
      name: `${P}task_failures_total`,
      help: 'Tasks that ended failed, by tool',
      labelNames: ['tool'],
      registers,
    }),
    toolErrors: new Counter({
      name: `${P}tool_errors_total`,
      help: 'Errors thrown by tool handlers (kept with their task, or answered as an isError result)',
      labelNames: ['tool'],
      registers,
    }),
    waitingForCode: new Gauge({
      name: `${P}tasks_waiting_for_code`,
      help: 'Runnable tasks this process cannot replay (their tool version is not one its code declares), by tool and version',
      labelNames: ['tool', 'version'],
      registers,
    }),
    takeovers: new Counter({
      name: `${P}lease_takeovers_total`,
      help: 'Runs that took over an expired lease',
      registers,
    }),
    denied: new Counter({
      name: `${P}access_denied_total`,
      help: 'Refused task or credential checks',
      labelNames: ['event'],
      registers,
    }),
  };
}

type Instruments = ReturnType<typeof taskInstruments>;
interface Inc {
  inc(): void;
}
interface Observe {
  observe(value: number): void;
}

/** The labelled children of one tool label, looked up once: no label hashing per run. */
interface ToolSeries {
  started: Inc;
  retries: Inc;
  failures: Inc;
  duration: Observe;
  ended: Map<string, Inc>;
}

function toolSeries(instruments: Instruments, toolLabel: (tool: string | undefined) => string) {
  const byLabel = new Map<string, ToolSeries>();
  return (tool: string): ToolSeries => {
    const label = toolLabel(tool);
    let series = byLabel.get(label);
    if (series === undefined) {
      series = {
        started: instruments.started.labels(label),
        retries: instruments.retries.labels(label),
        failures: instruments.failures.labels(label),
        duration: instruments.toolDurations.labels(label),
        ended: new Map(),
      };
      byLabel.set(label, series);
    }
    return series;
  };
}

export interface TaskMetrics {
  readonly observer: TaskObserver;
  audit(event: AuditEvent): void;
}

/** The task metrics in `registry`; `toolLabel` bounds the `tool` label values (see tool-labels.ts). */
export function createTaskMetrics(
  registry: Registry,
  toolLabel: (tool: string | undefined) => string,
): TaskMetrics {
  const instruments = taskInstruments(registry);
  const series = toolSeries(instruments, toolLabel);
  const runFinished = (run: RunInfo, kind: RunOutcome['kind'], ms: number, written: boolean): void => {
    const outcome = written ? kind : LEASE_LOST_OUTCOME;
    const s = series(run.tool);
    let ended = s.ended.get(outcome);
    if (ended === undefined) {
      ended = instruments.ended.labels(toolLabel(run.tool), outcome);
      s.ended.set(outcome, ended);
    }
    ended.inc();
    s.duration.observe(ms / 1000);
    instruments.durations.observe({ outcome }, ms / 1000);
    if (written && kind === 'failed') s.failures.inc();
  };
  const observer: TaskObserver = {
    runStarted(run) {
      series(run.tool).started.inc();
      if (run.takenOver) instruments.takeovers.inc();
    },
    runFinished,
    stepRetried(run) {
      series(run.tool).retries.inc();
    },
    toolError(report) {
      instruments.toolErrors.inc({ tool: toolLabel(report.tool) });
    },
    outOfScope(waiting) {
      instruments.waitingForCode.reset();
      // Tools without a label of their own add up under "other".
      const counts = new Map<string, { tool: string; version: string; count: number }>();
      for (const { tool, version, count } of waiting) {
        const labels = { tool: toolLabel(tool), version: version ?? '' };
        const key = `${labels.tool}\n${labels.version}`;
        const sum = counts.get(key);
        if (sum === undefined) counts.set(key, { ...labels, count });
        else sum.count += count;
      }
      for (const { count, ...labels } of counts.values()) instruments.waitingForCode.set(labels, count);
    },
  };
  return {
    observer,
    audit(event) {
      if (event.event === 'task.created') instruments.created.inc({ tool: toolLabel(event.tool) });
      else if (
        event.event === 'task.denied' ||
        event.event === 'auth.denied' ||
        event.event === 'admin.denied' ||
        event.event === 'task.limited'
      ) {
        instruments.denied.inc({ event: event.event });
      }
    },
  };
}
