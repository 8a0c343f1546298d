// Flags of `durable-mcp serve` read into settings: the server-wide step defaults, and callers' priorities.
import { describe, expect, it } from 'vitest';
import { UsageError } from '../args.js';
import { serveSettings } from './serve-flags.js';

const stepsOf = (maxAttempts: string) => serveSettings({ 'step-max-attempts': maxAttempts }).runtime.steps;

describe('serve --step-max-attempts', () => {
  it('takes a count of attempts, or infinite (as the library takes Infinity)', () => {
    expect(stepsOf('5')).toEqual({ retry: { maxAttempts: 5 } });
    for (const unbounded of ['infinite', 'Infinity', 'INFINITE'])
      expect(stepsOf(unbounded)).toEqual({ retry: { maxAttempts: Infinity } });
    expect(serveSettings({}).runtime.steps).toBeUndefined();
  });

  it('refuses anything else as a usage error', () => {
    for (const bad of ['0', '-1', '2.5', 'many', '', 'inf'])
      expect(() => stepsOf(bad), bad).toThrow(
        new UsageError('--step-max-attempts must be an integer of at least 1, or infinite'),
      );
  });
});

describe('serve --slot-wait-ms', () => {
  it('sets how long calls within their request wait for a slot (default 10 s)', () => {
    expect(serveSettings({ 'slot-wait-ms': '2500' }).runtime.slotWaitMs).toBe(2_500);
    expect(serveSettings({}).runtime.slotWaitMs).toBe(10_000);
    expect(() => serveSettings({ 'slot-wait-ms': '-1' })).toThrow(
      '--slot-wait-ms must be a non-negative integer',
    );
  });
});

describe('serve --allow-caller-priority', () => {
  it("honours callers' priorities only when given", () => {
    expect(serveSettings({ 'allow-caller-priority': true }).runtime.allowCallerPriority).toBe(true);
    expect(serveSettings({}).runtime.allowCallerPriority).toBe(false);
  });
});

describe('serve --public-url', () => {
  it('is the base of callback URLs, its host allowed in Host and Origin', () => {
    const { http } = serveSettings({
      'public-url': 'https://mcp.example.com/',
      'allowed-hosts': 'a.example',
    });
    expect(http.publicUrl).toBe('https://mcp.example.com');
    expect(http.extraHosts).toEqual(['a.example', 'mcp.example.com']);
    expect(serveSettings({}).http.publicUrl).toBeUndefined();
  });

  it('refuses what is not an http(s) URL without query or fragment', () => {
    for (const bad of [
      'mcp.example.com',
      'ftp://x.example',
      'https://x.example/?a=1',
      'https://x.example/#f',
    ])
      expect(() => serveSettings({ 'public-url': bad }), bad).toThrow(UsageError);
  });
});

describe('serve --max-stream-chunks-per-task, --max-stream-bytes-per-task', () => {
  it('bound what the streams of one task hold (defaults 10000 chunks and 16 MiB)', () => {
    const limits = serveSettings({
      'max-stream-chunks-per-task': '50',
      'max-stream-bytes-per-task': '4096',
    }).runtime.limits;
    expect(limits).toMatchObject({ maxStreamChunksPerTask: 50, maxStreamBytesPerTask: 4096 });
    expect(serveSettings({}).runtime.limits).toMatchObject({
      maxStreamChunksPerTask: 10_000,
      maxStreamBytesPerTask: 16 * 1024 * 1024,
    });
  });

  it('refuses what is not a whole number of at least 1', () => {
    for (const bad of ['0', '-3', '1.5', 'lots'])
      expect(() => serveSettings({ 'max-stream-chunks-per-task': bad }), bad).toThrow(UsageError);
    expect(() => serveSettings({ 'max-stream-bytes-per-task': '0' })).toThrow(UsageError);
  });
});
