// The sections of the suite, in running order.
import { CLOCK_INVARIANTS, CRASH_INVARIANTS } from './crash/invariants.js';
import { runCrash } from './crash/run.js';
import { FAULT_INVARIANTS, FULL_INVARIANTS } from './faults/invariants.js';
import { runFaults } from './faults/run.js';
import { FUZZ_INVARIANTS } from './fuzz/invariants.js';
import { runFuzz } from './fuzz/run.js';
import { LOAD_INVARIANTS } from './load/load-run.js';
import { runLoad } from './load/run.js';
import { ORACLE_INVARIANTS, runOracles } from './oracles/run.js';
import { ABUSE_INVARIANTS } from './abuse/abuse-run.js';
import { runAbuse } from './abuse/run.js';
import { IDLE_INVARIANTS, STREAM_INVARIANTS } from './edge/edge-run.js';
import { runIdleConnections } from './edge/idle-run.js';
import { runOperatorStreams } from './edge/streams-run.js';
import { GATEWAY_INVARIANTS } from './gateway/invariants.js';
import { runGateway } from './gateway/run.js';
import { PARALLEL_INVARIANTS, runParallel } from './parallel/run.js';
import type { Section } from './types.js';

export const SECTIONS: readonly Section[] = [
  {
    id: 'oracles',
    title: 'Self-check of the oracles',
    kind: 'oracles',
    invariants: ORACLE_INVARIANTS,
    run: () => runOracles(),
  },
  {
    id: 'crash-sqlite',
    title: 'Crash chaos, SQLite',
    kind: 'crash',
    invariants: CRASH_INVARIANTS,
    run: (ctx) => runCrash({ ...ctx, backend: 'sqlite', params: ctx.mode.crash }),
  },
  {
    id: 'crash-postgres',
    title: 'Crash chaos, PostgreSQL',
    kind: 'crash',
    postgres: true,
    invariants: CRASH_INVARIANTS,
    run: (ctx) => runCrash({ ...ctx, backend: 'postgres', params: ctx.mode.crash }),
  },
  {
    id: 'faults-postgres',
    title: 'Fault injection, PostgreSQL',
    kind: 'faults',
    postgres: true,
    invariants: FAULT_INVARIANTS,
    run: (ctx) => runFaults({ ...ctx, backend: 'postgres', params: ctx.mode.faults }),
  },
  {
    id: 'faults-sqlite',
    title: 'Fault injection, SQLite',
    kind: 'faults',
    invariants: FAULT_INVARIANTS,
    run: (ctx) => runFaults({ ...ctx, backend: 'sqlite', params: ctx.mode.faults }),
  },
  {
    id: 'faults-disk-full',
    title: 'Fault injection, SQLite disk full',
    kind: 'faults',
    invariants: FULL_INVARIANTS,
    run: (ctx) => runFaults({ ...ctx, backend: 'sqlite', fault: 'full', params: ctx.mode.faults }),
  },
  {
    id: 'clock-sqlite',
    title: 'Clock jumps, SQLite',
    kind: 'clock',
    invariants: CLOCK_INVARIANTS,
    run: (ctx) => runCrash({ ...ctx, backend: 'sqlite', params: ctx.mode.clock }),
  },
  {
    id: 'clock-postgres',
    title: 'Clock jumps, PostgreSQL',
    kind: 'clock',
    postgres: true,
    invariants: CLOCK_INVARIANTS,
    run: (ctx) => runCrash({ ...ctx, backend: 'postgres', params: ctx.mode.clock }),
  },
  {
    id: 'fuzz',
    title: 'Bad input (fuzzing)',
    kind: 'fuzz',
    invariants: FUZZ_INVARIANTS,
    run: (ctx) => runFuzz({ ...ctx, params: ctx.mode.fuzz }),
  },
  {
    id: 'load',
    title: 'Load',
    kind: 'load',
    invariants: LOAD_INVARIANTS,
    run: (ctx) => runLoad({ ...ctx, params: ctx.mode.load }),
  },
  {
    id: 'abuse-sqlite',
    title: 'Abuse, SQLite',
    kind: 'abuse',
    invariants: ABUSE_INVARIANTS,
    run: (ctx) => runAbuse({ ...ctx, backend: 'sqlite', params: ctx.mode.abuse }),
  },
  {
    id: 'abuse-postgres',
    title: 'Abuse, PostgreSQL',
    kind: 'abuse',
    postgres: true,
    invariants: ABUSE_INVARIANTS,
    run: (ctx) => runAbuse({ ...ctx, backend: 'postgres', params: ctx.mode.abuse }),
  },
  {
    id: 'idle-connections',
    title: 'Idle connections from one address',
    kind: 'edge',
    invariants: IDLE_INVARIANTS,
    run: (ctx) => runIdleConnections({ ...ctx, params: ctx.mode.edge }),
  },
  {
    id: 'operator-streams',
    title: 'Operator event stream flood',
    kind: 'edge',
    invariants: STREAM_INVARIANTS,
    run: (ctx) => runOperatorStreams({ ...ctx, params: ctx.mode.edge }),
  },
  {
    id: 'gateway-sqlite',
    title: 'Durable gateway under crashes, SQLite',
    kind: 'gateway',
    invariants: GATEWAY_INVARIANTS,
    run: (ctx) => runGateway({ ...ctx, backend: 'sqlite', params: ctx.mode.gateway }),
  },
  {
    id: 'gateway-postgres',
    title: 'Durable gateway under crashes, PostgreSQL',
    kind: 'gateway',
    postgres: true,
    invariants: GATEWAY_INVARIANTS,
    run: (ctx) => runGateway({ ...ctx, backend: 'postgres', params: ctx.mode.gateway }),
  },
  {
    id: 'parallel-sqlite',
    title: 'Parallel steps under crashes, SQLite',
    kind: 'parallel',
    invariants: PARALLEL_INVARIANTS,
    run: (ctx) => runParallel({ ...ctx, backend: 'sqlite', params: ctx.mode.parallel }),
  },
  {
    id: 'parallel-postgres',
    title: 'Parallel steps under crashes, PostgreSQL',
    kind: 'parallel',
    postgres: true,
    invariants: PARALLEL_INVARIANTS,
    run: (ctx) => runParallel({ ...ctx, backend: 'postgres', params: ctx.mode.parallel }),
  },
];
