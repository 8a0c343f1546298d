// The gateway rows: `--only gateway` keeps the rows they are compared with, each in the gateway section, and the
// gateway servers start after the upstream they stand in front of, which starts even when no selected row uses it.
import { describe, expect, it } from 'vitest';
import { serverWaves } from '../harness/section.js';
import { SERVERS } from '../harness/servers.js';
import { gatewayRows } from './gateway.js';
import { sectionsOf, selectScenarios } from './index.js';
import { GATEWAY_NO_WORKER, NO_WORKER_CREATION, UPSTREAM_CALL } from './names.js';

describe('bench gateway rows', () => {
  it('--only gateway selects the gateway rows and the rows they are compared with, all in the gateway section', () => {
    const selected = selectScenarios(/gateway/i)!;
    expect(selected.map((s) => s.name)).toEqual(gatewayRows.map((s) => s.name));
    expect(selected.map((s) => s.name)).toEqual(
      expect.arrayContaining([UPSTREAM_CALL, NO_WORKER_CREATION, GATEWAY_NO_WORKER]),
    );
    expect(sectionsOf(selected).map((s) => s.id)).toEqual(['gateway']);
  });

  it('states its targets against rows of its own section: ops/s against the upstream, CPU against serve', () => {
    const targets = gatewayRows.flatMap((s) => (s.kind === undefined ? (s.targets ?? []) : []));
    expect(targets).toEqual([
      { vs: UPSTREAM_CALL, min: 0.5 },
      { vs: NO_WORKER_CREATION, maxCpu: 1.2 },
    ]);
  });

  it('starts every gateway after its upstream, and the upstream whatever the rows use', () => {
    const gatewayKeys = [...new Set(gatewayRows.map((s) => s.server))].filter((k) => SERVERS[k]!.upstream);
    expect(gatewayKeys.length).toBeGreaterThan(0);
    const upstream = SERVERS[gatewayKeys[0]!]!.upstream!;
    // Only the rows of one gateway: its upstream is started first all the same.
    const onlyGateway = gatewayRows.filter((s) => s.server === gatewayKeys[0]);
    expect(serverWaves(onlyGateway)).toEqual([[upstream], [gatewayKeys[0]]]);
    const [first, second] = serverWaves(gatewayRows);
    expect(first).toContain(upstream);
    expect(second).toEqual(gatewayKeys);
    expect(first.filter((k) => SERVERS[k]!.upstream !== undefined)).toEqual([]);
  });
});
