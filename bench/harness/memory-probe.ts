// Reading a server's memory through the probe preloaded into it (bench/mem-probe.mjs).
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { MEM_TIMEOUT_MS } from '../config.js';
import type { Target } from '../types.js';
import { pause } from './http.js';

export interface MemoryUsage {
  rss: number;
  heapUsed: number;
  external: number;
  /** The reading taken when the probe was loaded, before the server's own modules. */
  atStart?: MemoryUsage;
}

/**
 * The server's memory right now, after a full GC: sends SIGUSR2 to the memory probe preloaded into it and reads
 * the `process.memoryUsage()` it writes.
 */
export async function probeMemory(target: Target): Promise<MemoryUsage> {
  const file = target.memoryFile!;
  rmSync(file, { force: true });
  target.child.kill('SIGUSR2');
  const started = performance.now();
  while (!existsSync(file)) {
    if (performance.now() - started > MEM_TIMEOUT_MS) {
      throw new Error(`${target.key}: no memory probe answer within ${MEM_TIMEOUT_MS} ms`);
    }
    await pause(5);
  }
  const usage = JSON.parse(readFileSync(file, 'utf8')) as MemoryUsage;
  rmSync(file, { force: true });
  return usage;
}
