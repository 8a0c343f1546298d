// The keys under which the gateway task asks its caller for an upstream's input. A task's keys are unique for its whole
// life, while each MRTR round of the upstream and the upstream's own task have key spaces of their own: a key keeps
// its name unless an earlier round of this call used it, and then becomes `key#2` (or the next number free). A replay
// walks the same rounds in the same order (their answers are recorded steps), so it names every key as the first run
// did, and finds the caller's answers under them.
import type { HandlerContext } from '../protocol/tool-types.js';
import type { InputRequests, InputResponses } from '../protocol/types.js';
import { ErrorCode } from '../wire/codes.js';
import { ProtocolError } from '../wire/protocol-error.js';

/** One round of the upstream's input (an MRTR round, or the upstream task). */
export interface InputPhase {
  /**
   * The caller's answers to these requests of the upstream, by the upstream's keys: ctx.inputs under the gateway's
   * keys, which ends the run asking for those not answered yet.
   */
  answer(ctx: HandlerContext, requests: InputRequests): InputResponses;
}

export interface InputKeys {
  /** The next round; keys the rounds before it used are renamed in it. */
  phase(): InputPhase;
}

/** ctx.inputs, with a request the gateway cannot pass on (the upstream's mistake) failing the call as such. */
function askCaller(ctx: HandlerContext, asked: InputRequests): InputResponses {
  try {
    return ctx.inputs(asked);
  } catch (err) {
    if (err instanceof TypeError)
      throw new ProtocolError(
        ErrorCode.InternalError,
        `the upstream asked for input the gateway cannot pass on: ${err.message}`,
      );
    throw err;
  }
}

export function createInputKeys(): InputKeys {
  const used = new Set<string>();
  return {
    phase(): InputPhase {
      const earlier = new Set(used);
      const toGateway = new Map<string, string>();
      const toUpstream = new Map<string, string>();
      const nameOf = (key: string): string => {
        const known = toGateway.get(key);
        if (known !== undefined) return known;
        let name = key;
        for (let n = 2; earlier.has(name) || toUpstream.has(name); n++) name = `${key}#${n}`;
        toGateway.set(key, name);
        toUpstream.set(name, key);
        used.add(name);
        return name;
      };
      return {
        answer(ctx, requests) {
          const asked: InputRequests = {};
          for (const [key, request] of Object.entries(requests)) asked[nameOf(key)] = request;
          const answers: InputResponses = {};
          for (const [name, response] of Object.entries(askCaller(ctx, asked))) {
            const key = toUpstream.get(name);
            if (key !== undefined) answers[key] = response;
          }
          return answers;
        },
      };
    },
  };
}
