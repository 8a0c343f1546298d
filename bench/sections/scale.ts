// Stored-task rows: the same sequential tasks/get on a store of 1k and one of 1M completed tasks.
import { SCALE_GET_MAX_SECONDS, SCALE_LARGE, SCALE_SMALL } from '../config.js';
import { fmtCount } from '../format.js';
import { getTask } from '../harness/requests.js';
import { timeSequentialGets } from '../harness/sequential-gets.js';
import type { LatencyScenario, RowState, Target, TargetView } from '../types.js';
import { SCALE_SMALL_ROW } from './names.js';

/** Setup of a stored-task row: the ids sampled from its whole store, visited in turn across runs. */
function scaleGetState(target: Target): RowState {
  return { ids: target.scale!.sample, next: 0 };
}

/**
 * tasks/get of the sampled tasks, one request at a time over one keep-alive connection, for `seconds` (at most
 * SCALE_GET_MAX_SECONDS); each run carries on where the previous one stopped, so every request reads another task.
 */
function scaleGets(target: TargetView, state: RowState | undefined, runSeconds: number) {
  const s = state!;
  return timeSequentialGets(target, Math.min(runSeconds, SCALE_GET_MAX_SECONDS), () => {
    const next = s.next ?? 0;
    s.next = next + 1;
    return getTask(s.ids[next % s.ids.length]!);
  });
}

// Each request is for another task sampled from the whole store.
export const scaleRows: LatencyScenario[] = [
  {
    name: SCALE_SMALL_ROW,
    server: 'ours-small',
    baseline: null,
    kind: 'latency',
    needs: 'scale',
    setup: scaleGetState,
    run: scaleGets,
  },
  {
    name: `ours tasks/get, ${fmtCount(SCALE_LARGE)} stored tasks (sequential)`,
    server: 'ours-large',
    baseline: SCALE_SMALL_ROW,
    kind: 'latency',
    needs: 'scale',
    target: { text: `p50 within 1.2 × ${fmtCount(SCALE_SMALL)} stored tasks (p50)`, p50Ratio: 1.2 },
    setup: scaleGetState,
    run: scaleGets,
  },
];
