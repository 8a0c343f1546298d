// The GET stream of a legacy session: list changes and updates of the resources the session subscribed to,
// relayed from the core's subscriptions/listen.
import type { AuthInfo } from '../protocol/tool-types.js';
import type { HttpReply } from '../transport/http/reply.js';
import type { McpServer } from '../protocol/server.js';
import { isJsonObject, notificationMessage, type JsonObject } from '../wire/jsonrpc.js';
import {
  LATEST_PROTOCOL_VERSION,
  META_CLIENT_CAPABILITIES,
  META_PROTOCOL_VERSION,
  META_SUBSCRIPTION_ID,
} from '../wire/meta-keys.js';
import type { LegacySession } from './sessions.js';

interface OpenStream {
  resubscribe(uris: string[]): void;
  end(): void;
}

/** This process's open GET streams, per session. */
export interface SessionStreams {
  add(sessionId: string, stream: OpenStream): () => void;
  /** The session's subscriptions changed: its streams listen again with the new set. */
  changed(session: LegacySession): void;
  /** The session ended: its streams close. */
  end(sessionId: string): void;
}

export function createSessionStreams(): SessionStreams {
  const bySession = new Map<string, Set<OpenStream>>();
  return {
    add(sessionId, stream) {
      const set = bySession.get(sessionId) ?? new Set();
      set.add(stream);
      bySession.set(sessionId, set);
      return () => {
        set.delete(stream);
        if (set.size === 0) bySession.delete(sessionId);
      };
    },
    changed(session) {
      for (const s of bySession.get(session.id) ?? []) s.resubscribe(session.subscriptions);
    },
    end(sessionId) {
      for (const s of bySession.get(sessionId) ?? []) s.end();
    },
  };
}

export interface GetStreamOptions {
  server: McpServer;
  session: LegacySession;
  auth: AuthInfo;
  reply: HttpReply;
  streams: SessionStreams;
}

/** Keeps the stream open until the client leaves, the session ends or the server shuts down. */
export async function serveGetStream(options: GetStreamOptions): Promise<void> {
  const { server, session, auth, reply: out, streams } = options;
  const closed = new AbortController();
  out.res.on('close', () => closed.abort());
  let uris = session.subscriptions;
  let restart: AbortController | undefined;
  const remove = streams.add(session.id, {
    resubscribe(next) {
      uris = next;
      restart?.abort();
    },
    end: () => closed.abort(),
  });
  const emit = (method: string, params: JsonObject): void => {
    if (method === 'notifications/subscriptions/acknowledged') return;
    const meta = isJsonObject(params._meta) ? { ...params._meta } : {};
    delete meta[META_SUBSCRIPTION_ID];
    const { _meta: _dropped, ...rest } = params;
    out.send(notificationMessage(method, Object.keys(meta).length > 0 ? { ...rest, _meta: meta } : rest));
  };
  out.start();
  try {
    // Each round is one listen; a new round starts only when this session's subscriptions changed.
    for (let round = 0; round < 100_000 && !closed.signal.aborted; round++) {
      restart = new AbortController();
      const outcome = await server.dispatch({
        request: {
          kind: 'request',
          id: `legacy-get-${round}`,
          method: 'subscriptions/listen',
          params: {
            notifications: {
              toolsListChanged: true,
              promptsListChanged: true,
              resourcesListChanged: true,
              resourceSubscriptions: uris,
            },
            _meta: { [META_PROTOCOL_VERSION]: LATEST_PROTOCOL_VERSION, [META_CLIENT_CAPABILITIES]: {} },
          },
        },
        auth,
        signal: AbortSignal.any([closed.signal, restart.signal]),
        header: undefined,
        emit,
      });
      // Ended without a restart: the client left or the server is shutting down.
      if (!outcome.ok || !restart.signal.aborted) break;
    }
  } finally {
    remove();
    out.end();
  }
}
