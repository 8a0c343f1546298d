// Memory probe preloaded into a benchmarked server (`node --expose-gc --import bench/mem-probe.mjs …`), for the
// benchmark's memory rows. On SIGUSR2 it runs two full garbage collections and writes `process.memoryUsage()` as
// JSON to the file named by DURABLE_MCP_BENCH_MEM_PROBE (written aside, then renamed, so the harness never reads half
// a file), with `atStart`: the same reading taken when the probe was loaded, after a full GC, before any of the
// server's own modules (the sleeping-task rows measure what the server added to the process since then). Without that
// variable or without `--expose-gc` it does nothing. A signal listener does not keep the process alive, so the server
// shuts down as it would without the probe. Plain JavaScript: it is preloaded into servers under test, which run
// without a TypeScript loader.
import { renameSync, writeFileSync } from 'node:fs';

const out = process.env.DURABLE_MCP_BENCH_MEM_PROBE;
const gc = globalThis.gc;

if (out !== undefined && out !== '' && typeof gc === 'function') {
  gc();
  gc();
  const atStart = process.memoryUsage();
  process.on('SIGUSR2', () => {
    gc();
    gc();
    writeFileSync(`${out}.tmp`, JSON.stringify({ ...process.memoryUsage(), atStart }));
    renameSync(`${out}.tmp`, out);
  });
}
