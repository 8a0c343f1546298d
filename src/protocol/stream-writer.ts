// HandlerContext.stream: the writer of one of the task's streams, over ExecutionContext.appendChunk; outside a task a
// writer whose appends go nowhere.
import type { ExecutionContext } from '../tasks/execution.js';
import { streamNameProblem, streamUri } from '../wire/stream-uri.js';
import type { StreamWriter } from './tool-types.js';

function checkedName(name: string): string {
  const problem = streamNameProblem(name);
  if (problem !== undefined) throw new TypeError(`ctx.stream: ${problem}`);
  return name;
}

const checkedChunk = (name: string, chunk: unknown): string => {
  if (typeof chunk !== 'string') throw new TypeError(`stream "${name}": a chunk must be a string`);
  return chunk;
};

/** The writer of stream `name` of task `taskId`, appending through `exec`. */
export function taskStreamWriter(taskId: string, exec: ExecutionContext, name: string): StreamWriter {
  checkedName(name);
  const uri = streamUri(taskId, name);
  return {
    name,
    uri,
    append(chunk) {
      const appended = (async () => {
        if (exec.appendChunk === undefined)
          throw new TypeError('ctx.stream needs a task store with streams (TaskStore.streams)');
        await exec.appendChunk(name, checkedChunk(name, chunk));
      })();
      // Refused or not, an append the handler does not wait for is no unhandled rejection.
      appended.catch(() => undefined);
      return appended;
    },
    links: () => [{ type: 'resource_link', uri, name, mimeType: 'text/plain' }],
  };
}

/** A writer for a handler that runs within its request: no task to keep the chunks. */
export function inlineStreamWriter(name: string): StreamWriter {
  checkedName(name);
  return {
    name,
    uri: undefined,
    async append(chunk) {
      checkedChunk(name, chunk);
    },
    links: () => [],
  };
}
