// A client that polls tasks/get next to the push streams, timing its round trips and what it learns when.
import { Agent } from 'node:http';
import { expectJsonRpcResult, post } from './http.js';
import { getTask } from './requests.js';
import { clockNs } from './task-stream.js';
import type { TargetView } from '../types.js';

/** When the poller first saw a task `working` and `completed` (clockNs). */
export interface FirstSeen {
  working?: number;
  completed?: number;
}

export interface PollResult {
  rtt: number[];
  firstSeen: Map<string, FirstSeen>;
}

export interface Poller {
  watch(id: string): void;
  stop(): Promise<PollResult>;
}

/**
 * A client that polls instead of subscribing, next to the push streams: tasks/get of the task being answered
 * (`watch`), one request at a time over its own keep-alive connection (to the last replica), back to back until
 * `stop`. Its round trips are timed under the push's own conditions (the same server, subscribers and
 * transitions), and its first answer that shows a task `working` or `completed` tells how soon the fastest
 * possible poller learns of the transition.
 */
export function pollDuringSteps(target: TargetView, first: string): Poller {
  const url = target.urls[target.urls.length - 1]!;
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const rtt: number[] = [];
  const firstSeen = new Map<string, FirstSeen>();
  let current = first;
  let polling = true;
  const loop = (async () => {
    while (polling) {
      const id = current;
      const t0 = clockNs();
      const res = await post(agent, url, getTask(id));
      const at = clockNs();
      const problem = expectJsonRpcResult(res.status, res.text);
      if (problem !== undefined) throw new Error(`tasks/get ${id} while pushing: ${problem}`);
      rtt.push((at - t0) / 1e6);
      // The DetailedTask's status, without parsing the answer (this client shares its process with the streams).
      const status = /"status":"(working|completed)"/.exec(res.text)?.[1] as keyof FirstSeen | undefined;
      if (status === undefined) continue;
      let seen = firstSeen.get(id);
      if (seen === undefined) firstSeen.set(id, (seen = {}));
      // `working` counts only if the poller saw it before `completed`.
      if (status === 'completed' || seen.completed === undefined) seen[status] ??= at;
    }
  })();
  return {
    watch(id) {
      current = id;
    },
    async stop() {
      polling = false;
      try {
        await loop;
      } finally {
        agent.destroy();
      }
      return { rtt, firstSeen };
    },
  };
}
