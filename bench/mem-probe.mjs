// Memory probe preloaded into a benchmarked server (`node --expose-gc --import bench/mem-probe.mjs …`), for the
// benchmark's memory-per-stream rows. On SIGUSR2 it runs two full garbage collections and writes
// `process.memoryUsage()` as JSON to the file named by DURABLE_MCP_BENCH_MEM_PROBE (written aside, then renamed, so
// the harness never reads half a file). Without that variable or without `--expose-gc` it does nothing. A signal
// listener does not keep the process alive, so the server shuts down as it would without the probe.
import { renameSync, writeFileSync } from 'node:fs';

const out = process.env.DURABLE_MCP_BENCH_MEM_PROBE;
const gc = globalThis.gc;

if (out !== undefined && out !== '' && typeof gc === 'function') {
  process.on('SIGUSR2', () => {
    gc();
    gc();
    writeFileSync(`${out}.tmp`, JSON.stringify(process.memoryUsage()));
    renameSync(`${out}.tmp`, out);
  });
}
