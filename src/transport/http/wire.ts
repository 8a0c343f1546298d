// The port through which other wires share the MCP endpoint with the 2026-07-28 core (the 2025-11-25 stateful wire
// is one): the HTTP edge authenticates once, offers each request to the configured wires in order, and the modern
// core answers whatever none of them served.
import type { IncomingMessage } from 'node:http';
import type { AuthInfo } from '../../protocol/tool-types.js';
import type { HeaderLookup } from '../../wire/headers.js';
import type { ParseOutcome } from '../../wire/jsonrpc.js';
import type { HttpReply } from './reply.js';

export interface WireExchange {
  readonly req: IncomingMessage;
  readonly reply: HttpReply;
  readonly header: HeaderLookup;
  /** The authenticated caller (the edge answered 401 already otherwise). */
  readonly auth: AuthInfo;
}

export interface WirePost extends WireExchange {
  readonly body: string;
  readonly parsed: ParseOutcome;
}

export interface HttpWire {
  /** From the parsed body and headers alone (no I/O): whether this POST may be this wire's. */
  claimsPost(parsed: ParseOutcome, header: HeaderLookup): boolean;
  /** Serves a claimed POST; false, with nothing written, hands it on (to the next wire, then the modern core). */
  servePost(post: WirePost): Promise<boolean>;
  /** From the headers alone: whether a request other than POST (GET, DELETE …) is this wire's. */
  claimsOther?(method: string | undefined, header: HeaderLookup): boolean;
  serveOther?(exchange: WireExchange): Promise<void>;
}
