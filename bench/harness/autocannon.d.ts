// The part of autocannon's API the harness uses (the package ships no types).
declare module 'autocannon' {
  interface AutocannonOptions {
    url: string;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    requests?: unknown[];
    connections?: number;
    pipelining?: number;
    duration?: number;
    /** Requests to send before the run ends (instead of `duration`). */
    amount?: number;
    /** Milliseconds between its samples; a run ends on the first sample after its last request (default 1000). */
    sampleInt?: number;
  }
  interface AutocannonResult {
    '2xx': number;
    non2xx: number;
    errors: number;
    timeouts: number;
    duration: number;
    latency: { p50: number; p99: number };
  }
  function autocannon(options: AutocannonOptions): Promise<AutocannonResult>;
  export default autocannon;
}
