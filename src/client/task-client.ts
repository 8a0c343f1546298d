// What a task handle needs from its client (requests, the input handler, the journal), apart from the handle itself.
import type { JsonObject } from '../wire/jsonrpc.js';

export type InputHandler = (
  requests: Record<string, JsonObject>,
  context: { tool?: string; taskId?: string },
) => Promise<Record<string, JsonObject>> | Record<string, JsonObject>;

/** What a handle needs from its client. */
export interface TaskClient {
  request(
    method: string,
    params: JsonObject,
    options?: { signal?: AbortSignal; onNotification?: (m: JsonObject) => void },
  ): Promise<JsonObject>;
  onInput: InputHandler | undefined;
  journalUpdate(taskId: string, status: string): void;
}
