import { describe, expect, it } from 'vitest';
import { createUpstreamHealth } from './health.js';

describe('the upstream’s health', () => {
  it('is unknown until reported, then up or down since its last change, with calls, errors and mean time', () => {
    let t = 1_000;
    const health = createUpstreamHealth('http://up.example/mcp', 'up.example', () => t);
    expect(health.component()).toMatchObject({ kind: 'upstream', status: 'unknown', calls: 0, errors: 0 });
    expect(health.component().since).toBeUndefined();
    expect(health.component().meanMs).toBeUndefined();
    health.observer.answering(true);
    t = 2_000;
    health.observer.answering(true);
    health.observer.call('ok', 10);
    health.observer.call('refused', 20);
    health.observer.call('lost', 30);
    health.observer.call('tool_error', 40);
    expect(health.component()).toEqual({
      kind: 'upstream',
      name: 'http://up.example/mcp',
      status: 'up',
      since: 1_000,
      calls: 4,
      errors: 2,
      meanMs: 25,
      metrics: [
        'durable_mcp_upstream_up{upstream="up.example"}',
        'durable_mcp_upstream_calls_total{upstream="up.example"}',
        'durable_mcp_upstream_call_duration_seconds{upstream="up.example"}',
      ],
    });
    t = 3_000;
    health.observer.answering(false);
    expect(health.component()).toMatchObject({ status: 'down', since: 3_000 });
  });
});
