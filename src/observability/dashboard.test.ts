// The Grafana dashboard (docs/grafana/durable-mcp.json) queries only metrics and labels this server exposes, so the
// two cannot drift apart: a renamed metric or label fails here, not on an operator's screen.
import { readFileSync } from 'node:fs';
import type { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { TaskStore } from '../tasks/store.js';
import { createMetrics } from './metrics.js';

interface Target {
  expr: string;
}
interface Panel {
  id: number;
  type: string;
  datasource?: { uid: string };
  targets?: Target[];
}
interface Dashboard {
  __inputs: { name: string; pluginId: string }[];
  schemaVersion: number;
  panels: Panel[];
  templating: { list: { query: { query: string } }[] };
}

const dashboard = JSON.parse(
  readFileSync(new URL('../../docs/grafana/durable-mcp.json', import.meta.url), 'utf8'),
) as Dashboard;

/** Labels Prometheus adds to every series it scrapes, and the bucket bound of histograms. */
const TARGET_LABELS = ['instance', 'job'];

/** Every series name the registry exposes (histograms as their _bucket, _sum and _count), with its label names. */
async function exposed(registry: Registry): Promise<Map<string, readonly string[]>> {
  const names = new Map<string, readonly string[]>();
  for (const { name, type } of await registry.getMetricsAsJSON()) {
    const metric = registry.getSingleMetric(name) as unknown as { labelNames?: string[] };
    const labels = [...(metric.labelNames ?? []), ...TARGET_LABELS];
    // prom-client declares MetricType as an enum it does not export at run time: compare its string value.
    if (String(type) === 'histogram') {
      names.set(`${name}_bucket`, [...labels, 'le']);
      names.set(`${name}_sum`, labels);
      names.set(`${name}_count`, labels);
    } else names.set(name, labels);
  }
  return names;
}

const expressions = (): string[] => [
  ...dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr)),
  ...dashboard.templating.list.map((v) => v.query.query),
];

describe('the Grafana dashboard', () => {
  it('is an importable dashboard on a DS_PROMETHEUS input', () => {
    expect(dashboard.schemaVersion).toBe(39);
    expect(dashboard.__inputs).toMatchObject([{ name: 'DS_PROMETHEUS', pluginId: 'prometheus' }]);
    const ids = dashboard.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const panel of dashboard.panels.filter((p) => p.type !== 'row')) {
      expect(panel.datasource?.uid, `panel ${panel.id}`).toBe('${DS_PROMETHEUS}');
      expect(panel.targets?.length, `panel ${panel.id}`).toBeGreaterThan(0);
    }
  });

  it('queries only metrics the server exposes, with labels they have', async () => {
    // A store with every optional series (a PostgreSQL store's creation batches included).
    const store = { creationBatches: () => ({ batches: 0, tasks: 0, seconds: 0 }) } as unknown as TaskStore;
    const names = await exposed(createMetrics(store).registry);
    const used = new Set<string>();
    for (const expr of expressions()) {
      const selectors = [...expr.matchAll(/\b(durable_mcp_\w+)(?:\{([^}]*)\})?/g)];
      expect(selectors.length, expr).toBeGreaterThan(0);
      const labelsHere = new Set<string>();
      for (const [, name = '', matchers = ''] of selectors) {
        used.add(name);
        const labels = names.get(name);
        expect(labels, `${name} in ${expr}`).toBeDefined();
        for (const label of labels ?? []) labelsHere.add(label);
        for (const [, label] of matchers.matchAll(/(\w+)\s*[=!]~?/g))
          expect(labels, `label ${label} of ${name}`).toContain(label);
      }
      // Grouping labels (`by (tool, le)`) belong to a metric of the expression.
      for (const [, list = ''] of expr.matchAll(/\bby \(([^)]*)\)/g))
        for (const label of list.split(',').map((l) => l.trim()))
          expect([...labelsHere], `by ${label} in ${expr}`).toContain(label);
    }
    // The per-tool panels are there.
    for (const name of [
      'durable_mcp_task_runs_total',
      'durable_mcp_task_runs_started_total',
      'durable_mcp_task_failures_total',
      'durable_mcp_step_retries_total',
      'durable_mcp_tool_run_duration_seconds_bucket',
      'durable_mcp_store_creation_batches_total',
    ])
      expect(used).toContain(name);
  });
});
