// The shipped Kubernetes manifests (deploy/kubernetes/*.yaml), parsed: probes on the metrics port the container
// declares; the migrations in a manifest of their own, awaited by an init container that the built CLI accepts
// and that waits until they are applied; Services and budgets selecting the pods they are meant for, workers
// included; replicas spread over nodes.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { BIN } from './support/cli.js';

type Json = Record<string, unknown>;
interface Doc {
  file: string;
  kind: string;
  name: string;
  spec: Json;
}
interface Container {
  name: string;
  image: string;
  args?: string[];
  ports?: { name?: string; containerPort: number }[];
  readinessProbe?: Json;
  livenessProbe?: Json;
  startupProbe?: Json;
}
interface PodTemplate {
  metadata: { labels: Record<string, string> };
  spec: {
    containers: Container[];
    initContainers?: Container[];
    topologySpreadConstraints?: {
      topologyKey: string;
      labelSelector: { matchLabels: Record<string, string> };
    }[];
    affinity?: { podAntiAffinity?: Json };
  };
}

const DIR = fileURLToPath(new URL('../deploy/kubernetes/', import.meta.url));
const docs: Doc[] = readdirSync(DIR)
  .filter((f) => f.endsWith('.yaml'))
  .flatMap((file) =>
    parseAllDocuments(readFileSync(join(DIR, file), 'utf8'))
      .map((d) => d.toJS() as Json | null)
      .filter((d): d is Json => d !== null)
      .map((d) => ({
        file,
        kind: String(d.kind),
        name: String((d.metadata as Json).name),
        spec: d.spec as Json,
      })),
  );
const of = (kind: string): Doc[] => docs.filter((d) => d.kind === kind);
const one = (kind: string, name: string): Doc => {
  const found = docs.find((d) => d.kind === kind && d.name === name);
  if (found === undefined) throw new Error(`no ${kind} ${name} in deploy/kubernetes`);
  return found;
};
const template = (d: Doc): PodTemplate => d.spec.template as PodTemplate;
/** Whether a selector (matchLabels or a Service's map) selects pods with these labels. */
const selects = (selector: Record<string, string>, labels: Record<string, string>): boolean =>
  Object.entries(selector).every(([k, v]) => labels[k] === v);
const serving = (): Doc[] => of('Deployment');
const flagValue = (args: readonly string[], flag: string): string | undefined => args[args.indexOf(flag) + 1];

const work = mkdtempSync(join(tmpdir(), 'durable-mcp-k8s-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('the shipped Kubernetes manifests', () => {
  it('hold the migration Job, the replicas, the workers, their Services and budgets', () => {
    expect(docs.map((d) => `${d.file} ${d.kind} ${d.name}`).sort()).toEqual(
      [
        'durable-mcp.yaml Deployment durable-mcp',
        'durable-mcp.yaml PodDisruptionBudget durable-mcp',
        'durable-mcp.yaml Service durable-mcp',
        'durable-mcp.yaml Service durable-mcp-metrics',
        'migrate-job.yaml Job durable-mcp-migrate',
        'workers.yaml Deployment durable-mcp-worker',
        'workers.yaml PodDisruptionBudget durable-mcp-worker',
      ].sort(),
    );
    for (const d of serving())
      expect(
        selects((d.spec.selector as Json).matchLabels as Record<string, string>, template(d).metadata.labels),
      ).toBe(true);
  });

  it('probes every serving container on its declared metrics port, the one --metrics-port opens', () => {
    for (const d of serving()) {
      const [main] = template(d).spec.containers;
      const metrics = main?.ports?.find((p) => p.name === 'metrics');
      expect(metrics, d.name).toBeDefined();
      expect(flagValue(main?.args ?? [], '--metrics-port')).toBe(String(metrics?.containerPort));
      for (const kind of ['readinessProbe', 'livenessProbe', 'startupProbe'] as const) {
        const probe = main?.[kind] as { httpGet?: { port: string | number; path: string } } | undefined;
        if (kind !== 'startupProbe') expect(probe, `${d.name} ${kind}`).toBeDefined();
        if (probe === undefined) continue;
        const port = probe.httpGet?.port;
        const declared = main?.ports?.find((p) => p.name === port || p.containerPort === port);
        expect(declared, `${d.name} ${kind} port ${String(port)}`).toBeDefined();
        expect(declared?.containerPort, `${d.name} ${kind}`).toBe(metrics?.containerPort);
      }
      expect((main?.readinessProbe?.httpGet as Json).path).toBe('/readyz');
      expect((main?.livenessProbe?.httpGet as Json).path).toBe('/healthz');
    }
  });

  it('runs the migrations apart and before the replicas: a Job of their own, awaited by an init container', () => {
    const job = one('Job', 'durable-mcp-migrate');
    // Not in a file with a Deployment: applied (and awaited) first, never rolled together with the replicas.
    expect(docs.filter((d) => d.file === job.file).map((d) => d.kind)).toEqual(['Job']);
    const [migrate] = template(job).spec.containers;
    expect(migrate?.args).toEqual(['migrate']);
    for (const d of serving()) {
      const { containers, initContainers } = template(d).spec;
      const main = containers[0] as Container;
      expect(main.args).toContain('--no-migrate');
      expect(main.image).toBe(migrate?.image);
      const wait = initContainers?.find((c) => c.args?.[0] === 'migrate');
      expect(wait?.image, d.name).toBe(main.image);
      expect(wait?.args?.slice(0, 3)).toEqual(['migrate', '--check', '--wait']);
    }
  });

  it('has init containers the CLI accepts, which wait until the Job has migrated the store', () => {
    const store = join(work, 'tasks.db');
    const run = (args: readonly string[]) =>
      spawnSync(process.execPath, [BIN, ...args], {
        encoding: 'utf8',
        env: { ...process.env, DURABLE_MCP_STORE: store, DURABLE_MCP_STORE_FILE: '' },
      });
    const init = template(one('Deployment', 'durable-mcp')).spec.initContainers?.[0]?.args ?? [];
    const shortly = init.map((a, i) => (init[i - 1] === '--wait' ? '1s' : a));
    const before = run(shortly);
    expect(before.status, before.stderr).toBe(1);
    expect(before.stdout).toContain('waiting for them to be applied');
    const job = run(template(one('Job', 'durable-mcp-migrate')).spec.containers[0]?.args ?? []);
    expect(job.status, job.stderr).toBe(0);
    const after = run(init);
    expect(after.status, after.stderr).toBe(0);
    expect(after.stdout.trim()).toBe(`${store}: up to date`);
  });

  it('selects with each Service and budget the pods it is meant for, workers included for metrics', () => {
    const labels = (name: string): Record<string, string> =>
      name === 'migrate'
        ? template(one('Job', 'durable-mcp-migrate')).metadata.labels
        : template(one('Deployment', name)).metadata.labels;
    const pods = {
      server: labels('durable-mcp'),
      worker: labels('durable-mcp-worker'),
      migrate: labels('migrate'),
    };
    const chosen = (selector: Record<string, string>): string[] =>
      Object.entries(pods)
        .filter(([, l]) => selects(selector, l))
        .map(([k]) => k);
    const svc = (name: string) => one('Service', name).spec.selector as Record<string, string>;
    const pdb = (name: string) =>
      (one('PodDisruptionBudget', name).spec.selector as Json).matchLabels as Record<string, string>;
    expect(chosen(svc('durable-mcp'))).toEqual(['server']);
    expect(chosen(svc('durable-mcp-metrics'))).toEqual(['server', 'worker']);
    expect(chosen(pdb('durable-mcp'))).toEqual(['server']);
    expect(chosen(pdb('durable-mcp-worker'))).toEqual(['worker']);
    // Every Service port's target is a port the selected pods declare.
    for (const s of of('Service')) {
      for (const d of serving().filter((x) =>
        selects(s.spec.selector as Record<string, string>, labels(x.name)),
      )) {
        const declared = template(d).spec.containers[0]?.ports?.map((p) => p.name) ?? [];
        for (const p of s.spec.ports as { targetPort: string }[])
          expect(declared, `${s.name} → ${d.name}`).toContain(p.targetPort);
      }
    }
  });

  it('spreads the pods of each Deployment over nodes and zones', () => {
    for (const d of serving()) {
      const { metadata, spec } = template(d);
      const keys = (spec.topologySpreadConstraints ?? [])
        .filter((c) => selects(c.labelSelector.matchLabels, metadata.labels))
        .map((c) => c.topologyKey);
      expect(keys, d.name).toEqual(
        expect.arrayContaining(['kubernetes.io/hostname', 'topology.kubernetes.io/zone']),
      );
      const anti = spec.affinity?.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution as
        | {
            podAffinityTerm: { topologyKey: string; labelSelector: { matchLabels: Record<string, string> } };
          }[]
        | undefined;
      expect(
        anti?.some(
          (t) =>
            t.podAffinityTerm.topologyKey === 'kubernetes.io/hostname' &&
            selects(t.podAffinityTerm.labelSelector.matchLabels, metadata.labels),
        ),
        d.name,
      ).toBe(true);
    }
  });
});
