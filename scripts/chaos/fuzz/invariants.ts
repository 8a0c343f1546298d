// The invariants of the fuzz section.

export const FUZZ_INVARIANTS: Readonly<Record<string, string>> = {
  'schema-valid':
    'every reply is a schema-valid JSON-RPC message (official 2026-07-28 + tasks schemas) with the status, id echo and stream rules of test/e2e/fuzz.test.ts',
  'no-5xx': 'no 5xx answer (there is no true internal fault to report on a healthy store)',
  'no-crash': 'the server process stays up and /healthz answers throughout',
  'bounded-memory':
    'the server runs the whole fuzz with its V8 old space capped (--max-old-space-size), so a leak would kill it, and its resident set stays under the limit',
  slowloris: 'while hundreds of connections trickle bytes, /healthz and tools/list still answer within 2 s',
  volume: 'the planned number of generated requests was sent within the time bound',
};
