// Benchmark runner (`npm run bench`): interleaved rounds of our server next to baselines measured in the same
// run — a bare node:http JSON-RPC echo, the official TypeScript SDK v2 server as a peer, raw better-sqlite3 and
// raw `pg` inserts and selects, the tasks/get round trip that push latency is compared with — and the scale rows
// (tasks/get and the operators' list page with 1k vs 1M stored tasks, memory per open subscription, creation next to
// 10k waiting or retrying tasks, 100k sleeping tasks), in sections measured one after another. The rows are in
// sections/, the process and load plumbing in harness/, the run in main.ts; bench/README.md says how to read the
// results. This entry only switches the workload sizes for `--smoke` (bench/config.ts reads them when it loads, and
// every child process inherits them) before the run is loaded.
import { SMOKE_ENV } from './smoke-env.js';

if (process.argv.slice(2).includes('--smoke')) process.env[SMOKE_ENV] = '1';
await import('./main.js');
