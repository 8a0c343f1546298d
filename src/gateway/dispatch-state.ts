// Where a gateway task's upstream call stands, for operators: read from the task's steps (delivery.ts names them:
// a round's `dispatched` marker, then its `upstream` answer), the latest round of the latest exchange deciding. Pure
// over the inspection, plus the one answer value that may name an upstream task.
import type { AdminPayload, AdminTaskUpstream, AdminTaskUpstreamView } from '../tasks/admin.js';
import type { InspectedStep, TaskInspection } from '../tasks/inspection.js';
import { stepNames } from './delivery.js';

/** The exchange and round a step of the call is, and whether it is the marker or the answer (stepNames inverted). */
export function parseStepName(
  name: string,
): { part: 'marker' | 'answer'; exchange: number; round: number } | undefined {
  const m = /^(dispatched|upstream)(?:-(\d{1,4}))?(?:@(\d{1,4}))?$/.exec(name);
  if (m === null) return undefined;
  const round = m[2] === undefined ? 1 : Number(m[2]);
  const exchange = m[3] === undefined ? 1 : Number(m[3]);
  // Only the names delivery.ts writes (`dispatched-1` and `@1` never are).
  const names = stepNames(exchange, round);
  const part = m[1] === 'dispatched' ? 'marker' : 'answer';
  return (part === 'marker' ? names.marker : names.answer) === name ? { part, exchange, round } : undefined;
}

/** The longest upstream task id shown (the upstream chose it). */
const MAX_ID = 256;

/** The upstream's own task id when an answer is a task it made (`{ resultType: "task", taskId }`). */
export function upstreamTaskOf(answer: AdminPayload | undefined): string | undefined {
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) return undefined;
  const { resultType, taskId } = answer as Record<string, unknown>;
  return resultType === 'task' && typeof taskId === 'string' && taskId !== '' && taskId.length <= MAX_ID
    ? taskId
    : undefined;
}

/** The latest round's marker and answer step, and whether that answer is done. */
export function latestRound(
  steps: readonly InspectedStep[],
): { marker: string; answer: string; answered: boolean } | undefined {
  let latest: { exchange: number; round: number; marker: string } | undefined;
  const answered = new Set<string>();
  for (const step of steps) {
    if (!step.done) continue;
    const parsed = parseStepName(step.name);
    if (parsed === undefined) continue;
    if (parsed.part === 'answer') answered.add(step.name);
    else if (
      latest === undefined ||
      parsed.exchange > latest.exchange ||
      (parsed.exchange === latest.exchange && parsed.round > latest.round)
    )
      latest = { ...parsed, marker: step.name };
  }
  if (latest === undefined) return undefined;
  const answer = stepNames(latest.exchange, latest.round).answer;
  return { marker: latest.marker, answer, answered: answered.has(answer) };
}

/**
 * The view the operator API shows of the gateway's tasks: those of the upstream's tools (`isUpstreamTool`), and any
 * task with a dispatched marker. `upstream` names the upstream in it.
 */
export function createDispatchView(
  upstream: string,
  isUpstreamTool: (tool: string) => boolean,
): AdminTaskUpstreamView {
  return async (task: TaskInspection, step): Promise<AdminTaskUpstream | undefined> => {
    const round = latestRound(task.steps);
    if (round === undefined)
      return isUpstreamTool(task.tool) ? { upstream, dispatch: 'not_dispatched' } : undefined;
    if (!round.answered)
      return { upstream, dispatch: 'dispatched', step: round.marker, recordStep: round.answer };
    const upstreamTaskId = upstreamTaskOf(await step(round.answer));
    return upstreamTaskId === undefined
      ? { upstream, dispatch: 'answered', step: round.answer }
      : { upstream, dispatch: 'following', step: round.answer, upstreamTaskId };
  };
}
