// The MCP endpoint for node:http as durable-mcp serves it: the HTTP edge with the 2026-07-28 core and, unless
// switched off, the 2025-11-25 stateful wire beside it.
import { createLegacyWire, type LegacyOptions } from './legacy/wire.js';
import { createHttpEdge, type HttpEdgeOptions, type HttpHandler } from './transport/http/handler.js';
import type { HttpWire } from './transport/http/wire.js';

export interface HttpHandlerOptions extends Omit<HttpEdgeOptions, 'wires'> {
  /**
   * The 2025-11-25 wire on the same endpoint (default on). Give it the task store so that sessions and tasks/list
   * are shared by every replica (`createDurableMcp(…).listen()` does); `false` turns it off.
   */
  legacy?: LegacyOptions | false;
  /** Other wires, offered each request after the legacy one and before the modern core. */
  wires?: readonly HttpWire[];
}

export function createHttpHandler(options: HttpHandlerOptions): HttpHandler {
  const { legacy, wires = [], ...edge } = options;
  const legacyWire = legacy === false ? [] : [createLegacyWire({ server: options.server, ...legacy })];
  return createHttpEdge({ ...edge, wires: [...legacyWire, ...wires] });
}
