// Incremental Server-Sent Events reading: eventsource-parser applies the WHATWG rules (fields, comments, CR, LF or
// CRLF line ends, chunks split anywhere); this keeps what a stream's reader needs besides the events themselves (the
// last event id and the reconnection time the server asked for) and reads an event's data as a JSON-RPC message.
import { createParser, type EventSourceParser } from 'eventsource-parser';

/** One dispatched event. */
export interface SseEvent {
  /** Its type: `message` unless the server named another with the `event` field. */
  type: string;
  /** Its data lines, joined with `\n`. */
  data: string;
  /** The `id` field of this event, when it had one. */
  id: string | undefined;
}

/** Feed it text chunks as they arrive; each push returns the events the chunk completed. */
export class SseParser {
  /** The id of the last event that named one: what a client reconnecting would send as `Last-Event-ID`. */
  lastEventId: string | undefined;
  /** The reconnection time the server asked for with the `retry` field (ms), the last one given. */
  retryMs: number | undefined;
  private completed: SseEvent[] = [];
  private readonly parser: EventSourceParser = createParser({
    onEvent: ({ event, data, id }) => {
      if (id !== undefined) this.lastEventId = id;
      this.completed.push({ type: event ?? 'message', data, id });
    },
    onRetry: (ms) => {
      this.retryMs = ms;
    },
    // Invalid `retry` values and unknown fields are ignored, as the standard says.
  });

  push(chunk: string): SseEvent[] {
    this.parser.feed(chunk);
    return this.completed.splice(0);
  }
}

/** An event's JSON-RPC message, or why its data could not be one. */
export type SseMessage = { ok: true; message: unknown } | { ok: false; reason: string };

/**
 * What an event carries for MCP: undefined for events of another type than `message` (not MCP's) and for events
 * with empty data (a server marking a point to resume from); otherwise its data parsed as JSON, or why it is not.
 */
export function readMessage(event: SseEvent): SseMessage | undefined {
  if (event.type !== 'message' || event.data === '') return undefined;
  try {
    return { ok: true, message: JSON.parse(event.data) };
  } catch (err) {
    const shown = event.data.length > 80 ? `${event.data.slice(0, 80)}…` : event.data;
    return { ok: false, reason: `${(err as Error).message}: ${shown}` };
  }
}
