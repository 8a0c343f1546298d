// The switch of the smoke run's workload sizes, in a module of its own: bench/run.ts sets it before bench/config.ts,
// which reads it once when it loads, is loaded (and every child process inherits it).
export const SMOKE_ENV = 'DURABLE_MCP_BENCH_SMOKE';
